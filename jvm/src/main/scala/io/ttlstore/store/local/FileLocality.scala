package io.ttlstore.store.local

import java.io.File

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotManifest, SstDownloads, SstFile, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.store.nativelib.LazyFileSystemLoader
import io.ttlstore.store.rocksdb.LazyFiles

/**
 * Where a store's SST files live while its DB reads them, chosen once when its provider opens (as
 * [[CheckpointFormat]] is), never tested per load. Every restore goes through the same two steps:
 * [[fetch]] brings in what the DB needs before it opens; [[serve]] gives the DB what it reads from the
 * checkpoint once it opens. The modes:
 *  - [[FileLocality.AllLocal]] (the default): every SST file is fetched before the DB opens;
 *  - [[FileLocality.OpenFirst]] (`lazyLoad.enabled`): the DB opens on the snapshot's small files and
 *    reads its SST files from the checkpoint while they come down ([[Hydration]]);
 *  - [[FileLocality.Remote]] (`remote.localCacheMB`): the files not local stay in the checkpoint, and
 *    the executor keeps a budget of them local ([[RemoteFiles]], [[LocalSstCache]]).
 */
sealed trait FileLocality {

  /**
   * Fills the empty directory `dir` with the small files of `snapshot` and the SST files the mode keeps
   * local before the DB opens, reusing those of `reusable` (by local name) that have the recorded size
   * and CRC32C.
   */
  def fetch(snapshot: VersionFile, dir: File, reusable: Map[String, File]): FileLocality.Fetched

  /**
   * What the DB opening on `dir` as `version` reads from the checkpoint: `remote`, the SST files [[fetch]]
   * left there. None: every file it reads is local.
   */
  def serve(dir: File, version: Long, remote: Seq[SstFile]): Option[LazyFiles]

  /**
   * Whether a restored store scans its keys in the background ([[StoredKeys]]): not in remote mode, whose reads of the
   * checkpoint the scan would multiply (a store opened first scans once its files are local).
   */
  def scansKeys: Boolean = true
}

object FileLocality {

  /**
   * What a snapshot's fetch did: its manifest, the SST files left in the checkpoint, and what it counts as
   * fetched and reused (files that come down after the DB opens count as fetched).
   */
  final case class Fetched(manifest: SnapshotManifest, remote: Seq[SstFile], counted: SstDownloads.Fetched)

  /** Every SST file fetched, `threads` at a time, before the DB opens. */
  final class AllLocal(files: CheckpointFiles, threads: Int) extends FileLocality {
    override def fetch(snapshot: VersionFile, dir: File, reusable: Map[String, File]): Fetched = {
      val (manifest, got) = files.downloadSnapshot(snapshot, dir, threads, reusable)
      Fetched(manifest, Nil, got)
    }

    override def serve(dir: File, version: Long, remote: Seq[SstFile]): Option[LazyFiles] = None

    override def toString: String = "SST files local before a store opens"
  }

  /** The DB opens before its SST files are local, and reads them from the checkpoint while they come down. */
  final class OpenFirst(store: String, files: CheckpointFiles, threads: Int, readTimeoutMs: Long) extends FileLocality {
    override def fetch(snapshot: VersionFile, dir: File, reusable: Map[String, File]): Fetched = {
      val manifest = files.restoreSmallFiles(snapshot, dir)
      val remote = SstDownloads.reuse(dir, manifest.sstFiles, reusable)
      Fetched(manifest, remote, SstDownloads.Fetched.of(manifest.sstFiles, remote))
    }

    override def serve(dir: File, version: Long, remote: Seq[SstFile]): Option[LazyFiles] =
      if (remote.isEmpty) None
      else Some(Hydration.start(store, dir, remote, files, version, threads, readTimeoutMs))

    override def toString: String = "stores open before their SST files are local (lazyLoad.enabled)"
  }

  /**
   * Remote mode: the SST files not local are read from the checkpoint, and the executor keeps about
   * `budgetBytes` of them local; `uploaded` names the files the checkpoint holds of the store's lineage.
   */
  final class Remote(files: CheckpointFiles, threads: Int, readTimeoutMs: Long, budgetBytes: Long,
      uploaded: () => Map[String, SstFile]) extends FileLocality {
    override def fetch(snapshot: VersionFile, dir: File, reusable: Map[String, File]): Fetched = {
      val manifest = files.restoreSmallFiles(snapshot, dir)
      Fetched(manifest, SstDownloads.reuse(dir, manifest.sstFiles, reusable), SstDownloads.Fetched.Zero)
    }

    /** Always served: the file system tracks the files RocksDB writes too, to demote them later. */
    override def serve(dir: File, version: Long, remote: Seq[SstFile]): Option[LazyFiles] =
      Some(RemoteFiles.start(dir, remote, files, version, readTimeoutMs, budgetBytes, threads, uploaded))

    override def scansKeys: Boolean = false

    override def toString: String = s"remote mode, ${budgetBytes >> 20} MiB of SST files local per executor"
  }

  /**
   * The mode `settings` ask for `store`; a mode that needs the lazy file system fails by name where it cannot
   * load, unless `lazyLoad.enabled=auto` asked for it (then every file is local).
   */
  def choose(store: String, settings: TtlStoreSettings, files: CheckpointFiles,
      uploaded: () => Map[String, SstFile]): FileLocality =
    if (LazyFileSystemLoader.remoteWanted(settings, store)) {
      new Remote(files, settings.downloadThreads, settings.lazyReadTimeoutMs, settings.remoteCacheMb << 20, uploaded)
    } else if (LazyFileSystemLoader.wanted(settings, store)) {
      new OpenFirst(store, files, settings.downloadThreads, settings.lazyReadTimeoutMs)
    } else new AllLocal(files, settings.downloadThreads)
}
