package io.ttlstore.store.local

import java.io.File

import org.apache.commons.io.FileUtils

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotManifest, SnapshotUploader, SstDownloads, SstFile, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.store.nativelib.LazyFileSystemLoader
import io.ttlstore.store.rocksdb.{LazyFiles, LocalDiskFull}

/**
 * The directory of a store's RocksDB working copy, filled from a snapshot or emptied on each
 * restore. The DB held before is set aside while the snapshot's files come in: the SST files it
 * shares with the snapshot (same name, size and CRC32C: a batch retried after a failure goes back
 * to an older version built on the same files) are moved into place, the others are fetched
 * ([[SstDownloads]]), before the DB opens or, with `lazyLoad.enabled`, while it reads them from the
 * checkpoint ([[Hydration]]); in remote mode they stay there ([[RemoteFiles]]). What restores fetched and reused is counted until [[takeFetched]].
 */
private[local] final class DbDirectory(workDir: File, storeName: String, files: CheckpointFiles,
    settings: TtlStoreSettings, snapshots: SnapshotUploader) {
  val dir = new File(workDir, "db")
  private val previous = new File(workDir, "db-previous")
  private var fetched = SstDownloads.Fetched.Zero

  /**
   * Empties the directory and fills it from `snapshot` (None: it stays empty), and tells `snapshots` which SST files
   * the checkpoint holds of the new DB; returns the snapshot's manifest, and the SST files the DB reads from the
   * checkpoint: those still coming down when the store opens before they are local, or, in remote mode
   * (`remote.localCacheMB`), those it keeps there ([[RemoteFiles]]).
   */
  def restore(snapshot: Option[VersionFile]): (Option[SnapshotManifest], Option[LazyFiles]) = {
    FileUtils.deleteQuietly(previous)
    if (snapshot.isEmpty || !dir.renameTo(previous)) FileUtils.deleteQuietly(dir)
    dir.mkdirs()
    val reusable = Option(previous.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst"))
      .map(f => f.getName -> f).toMap
    val threads = settings.downloadThreads
    val remoteMode = LazyFileSystemLoader.remoteWanted(settings, storeName)
    def remoteFiles(version: Long, ssts: Seq[SstFile]): RemoteFiles = RemoteFiles.start(dir, ssts, files, version,
      settings.lazyReadTimeoutMs, settings.remoteCacheMb << 20, threads, () => snapshots.uploadedFiles)
    try {
      val (manifest, served) = snapshot.fold((Option.empty[SnapshotManifest], Option.empty[Seq[SstFile]])) { f =>
        LocalDiskFull.named(storeName, dir, s"download the snapshot of version ${f.version}") {
          if (remoteMode || LazyFileSystemLoader.wanted(settings, storeName)) {
            val manifest = files.restoreSmallFiles(f, dir)
            val remote = SstDownloads.reuse(dir, manifest.sstFiles, reusable)
            if (!remoteMode) fetched += SstDownloads.Fetched.of(manifest.sstFiles, remote)
            (Some(manifest), Some(remote))
          } else {
            val (manifest, got) = files.downloadSnapshot(f, dir, threads, reusable)
            fetched += got
            (Some(manifest), None)
          }
        }
      }
      snapshots.reset(manifest)
      val version = snapshot.fold(0L)(_.version)
      (manifest,
        if (remoteMode) Some(remoteFiles(version, served.getOrElse(Nil)))
        else served.filter(_.nonEmpty).map(Hydration.start(storeName, dir, _, files, version, threads,
            settings.lazyReadTimeoutMs)))
    } finally FileUtils.deleteQuietly(previous)
  }

  /** The SST files restores fetched and reused since the previous call. */
  def takeFetched(): SstDownloads.Fetched = { val f = fetched; fetched = SstDownloads.Fetched.Zero; f }
}
