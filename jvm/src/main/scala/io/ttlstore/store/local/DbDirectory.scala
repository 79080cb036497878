package io.ttlstore.store.local

import java.io.File

import org.apache.commons.io.FileUtils

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotManifest, SstDownloads, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.store.nativelib.LazyFileSystemLoader
import io.ttlstore.store.rocksdb.LocalDiskFull

/**
 * The directory of a store's RocksDB working copy, filled from a snapshot or emptied on each
 * restore. The DB held before is set aside while the snapshot's files come in: the SST files it
 * shares with the snapshot (same name, size and CRC32C: a batch retried after a failure goes back
 * to an older version built on the same files) are moved into place, the others are fetched
 * ([[SstDownloads]]), before the DB opens or, with `lazyLoad.enabled`, while it reads them from the
 * checkpoint ([[Hydration]]). What restores fetched and reused is counted until [[takeFetched]].
 */
private[local] final class DbDirectory(workDir: File, storeName: String, files: CheckpointFiles,
    settings: TtlStoreSettings) {
  val dir = new File(workDir, "db")
  private val previous = new File(workDir, "db-previous")
  private var fetched = SstDownloads.Fetched.Zero

  /**
   * Empties the directory and fills it from `snapshot` (None: it stays empty); the snapshot's manifest, and the SST
   * files still coming down when the store opens before they are local.
   */
  def restore(snapshot: Option[VersionFile]): (Option[SnapshotManifest], Option[Hydration]) = {
    FileUtils.deleteQuietly(previous)
    if (snapshot.isEmpty || !dir.renameTo(previous)) FileUtils.deleteQuietly(dir)
    dir.mkdirs()
    val reusable = Option(previous.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst"))
      .map(f => f.getName -> f).toMap
    val threads = settings.downloadThreads
    try snapshot.fold((Option.empty[SnapshotManifest], Option.empty[Hydration])) { f =>
        LocalDiskFull.named(storeName, dir, s"download the snapshot of version ${f.version}") {
          if (LazyFileSystemLoader.wanted(settings, storeName)) {
            val manifest = files.restoreSmallFiles(f, dir)
            val remote = SstDownloads.reuse(dir, manifest.sstFiles, reusable)
            fetched += SstDownloads.Fetched.of(manifest.sstFiles, remote)
            (Some(manifest),
              Some(remote).filter(_.nonEmpty)
                .map(Hydration.start(storeName, dir, _, files, f.version, threads, settings.lazyReadTimeoutMs)))
          } else {
            val (manifest, got) = files.downloadSnapshot(f, dir, threads, reusable)
            fetched += got
            (Some(manifest), None)
          }
        }
      }
    finally FileUtils.deleteQuietly(previous)
  }

  /** The SST files restores fetched and reused since the previous call. */
  def takeFetched(): SstDownloads.Fetched = { val f = fetched; fetched = SstDownloads.Fetched.Zero; f }
}
