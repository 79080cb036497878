package io.ttlstore.store.local

import java.io.File

import io.ttlstore.checkpoint.SnapshotUploader

/**
 * What a store holds on the executor's disk and what it knows of its snapshots in the checkpoint: the newest snapshot
 * (None: none yet), the bytes of its DB's directory, and the SST files its DB still reads from the checkpoint.
 */
final case class StoreFootprint(snapshot: Option[SnapshotUploader.Stamp], localBytes: Long, filesNotLocal: Int)

object StoreFootprint {

  /** The bytes of the files directly in `dir` (a RocksDB directory is flat); 0 where it is gone. */
  def bytesIn(dir: File): Long = Option(dir.listFiles()).fold(0L)(_.iterator.filter(_.isFile).map(_.length()).sum)
}
