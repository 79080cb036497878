package io.ttlstore.store.local

import java.io.File

import org.apache.commons.io.FileUtils

import io.ttlstore.checkpoint.{SnapshotManifest, SnapshotUploader, SstDownloads, SstFile, VersionFile}
import io.ttlstore.store.rocksdb.{LazyFiles, LocalDiskFull}

/**
 * The directory of a store's RocksDB working copy, filled from a snapshot or emptied on each restore.
 * The DB held before is set aside while the snapshot's files come in: the SST files it shares with the
 * snapshot (same name, size and CRC32C: a batch retried after a failure goes back to an older version
 * built on the same files) are moved into place instead of fetched. The store's [[FileLocality]] decides
 * which files are local before the DB opens and what it reads from the checkpoint. What restores fetched
 * and reused is counted until [[takeFetched]].
 */
private[local] final class DbDirectory(workDir: File, storeName: String, locality: FileLocality,
    snapshots: SnapshotUploader) {
  import DbDirectory.Restored

  val dir = new File(workDir, "db")
  private val previous = new File(workDir, "db-previous")
  private var fetched = SstDownloads.Fetched.Zero

  /**
   * Empties the directory and fills it from `snapshot` (None: it stays empty), and tells `snapshots` which SST files
   * the checkpoint holds of the new DB.
   */
  def restore(snapshot: Option[VersionFile]): Restored = {
    FileUtils.deleteQuietly(previous)
    if (snapshot.isEmpty || !dir.renameTo(previous)) FileUtils.deleteQuietly(dir)
    dir.mkdirs()
    val reusable = Option(previous.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst"))
      .map(f => f.getName -> f).toMap
    try {
      val got = snapshot.map { f =>
        LocalDiskFull.named(storeName, dir, s"download the snapshot of version ${f.version}") {
          locality.fetch(f, dir, reusable)
        }
      }
      got.foreach(g => fetched += g.counted)
      val manifest = got.map(_.manifest)
      snapshots.reset(manifest)
      Restored(manifest, locality.serve(dir, snapshot.fold(0L)(_.version), got.fold(Seq.empty[SstFile])(_.remote)))
    } finally FileUtils.deleteQuietly(previous)
  }

  /** The SST files restores fetched and reused since the previous call. */
  def takeFetched(): SstDownloads.Fetched = { val f = fetched; fetched = SstDownloads.Fetched.Zero; f }
}

private[local] object DbDirectory {

  /** A restored directory: the snapshot's manifest (None: empty), and the SST files the DB reads from the checkpoint. */
  final case class Restored(manifest: Option[SnapshotManifest], served: Option[LazyFiles])
}
