package io.ttlstore.store.local

import java.io.File

import org.apache.commons.io.FileUtils

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotManifest, SstDownloads, VersionFile}
import io.ttlstore.store.rocksdb.LocalDiskFull

/**
 * The directory of a store's RocksDB working copy, filled from a snapshot or emptied on each
 * restore. The DB held before is set aside while the snapshot's files come in: the SST files it
 * shares with the snapshot (same name, size and CRC32C: a batch retried after a failure goes back
 * to an older version built on the same files) are moved into place, the others are fetched
 * ([[SstDownloads]]). What restores fetched and reused is counted until [[takeFetched]].
 */
private[local] final class DbDirectory(workDir: File, storeName: String, files: CheckpointFiles, threads: Int) {
  val dir = new File(workDir, "db")
  private val previous = new File(workDir, "db-previous")
  private var fetched = SstDownloads.Fetched.Zero

  /** Empties the directory and fills it from `snapshot` (None: it stays empty); the snapshot's manifest. */
  def restore(snapshot: Option[VersionFile]): Option[SnapshotManifest] = {
    FileUtils.deleteQuietly(previous)
    if (snapshot.isEmpty || !dir.renameTo(previous)) FileUtils.deleteQuietly(dir)
    dir.mkdirs()
    val reusable = Option(previous.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst"))
      .map(f => f.getName -> f).toMap
    try snapshot.map { f =>
        val (manifest, got) = LocalDiskFull.named(storeName, dir, s"download the snapshot of version ${f.version}")(
          files.downloadSnapshot(f, dir, threads, reusable))
        fetched += got
        manifest
      }
    finally FileUtils.deleteQuietly(previous)
  }

  /** The SST files restores fetched and reused since the previous call. */
  def takeFetched(): SstDownloads.Fetched = { val f = fetched; fetched = SstDownloads.Fetched.Zero; f }
}
