package io.ttlstore.checkpoint

import java.io._
import java.nio.file.Files
import java.util.UUID

import scala.collection.immutable.SortedSet
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * ttlstore's files in one store's checkpoint directory, all below `ttlstore/` so they never collide
 * with the files of Spark's HDFS (`<v>.delta`, `<v>.snapshot`) or RocksDB providers (`<v>.zip`,
 * `<v>.changelog`, `SSTs/`, `logs/`):
 * {{{
 *   <checkpoint>/state/<operatorId>/<partitionId>[/<storeName>]/ttlstore/
 *       <v>.changelog            changes of version v ([[Changelog]])
 *       <v>.snapshot             zip: manifest.json + the DB's small files (MANIFEST, OPTIONS, CURRENT)
 *       sst/<n>-<uuid>.sst       SST files, uploaded once, shared by later snapshots
 * }}}
 * Under checkpoint format v2 a version's files carry its checkpoint id: `<v>_<id>.changelog`,
 * `<v>_<id>.snapshot` ([[Lineage]]).
 * Everything goes through Spark's CheckpointFileManager, so any HDFS-compatible store works; on the
 * local file system, files are written without it ([[LocalAtomicFile]]).
 */
final class CheckpointFiles(val storeDir: Path, val hadoopConf: Configuration) {
  import CheckpointFiles._

  val root: Path = new Path(storeDir, DirName)
  val sstDir: Path = new Path(root, "sst")
  private lazy val fm = CheckpointFileManager.create(root, hadoopConf)
  private lazy val local = LocalAtomicFile.applies(root, hadoopConf)
  @volatile private var dirsCreated = false
  private val manifests = new java.util.concurrent.ConcurrentHashMap[(VersionFile, FileStamp), SnapshotManifest]()

  /** The record of the Spark provider state this store adopted, if any ([[AdoptionRecord]]). */
  lazy val adoption = new AdoptionFile(root, hadoopConf, createAtomic)

  def changelogPath(file: VersionFile): Path = new Path(root, s"${file.stem}.changelog")
  def snapshotPath(file: VersionFile): Path = new Path(root, s"${file.stem}.snapshot")
  def sstPath(dfsName: String): Path = new Path(sstDir, dfsName)
  def rootPath(name: String): Path = new Path(root, name)

  def listing(): Listing = {
    val statuses = if (fm.exists(root)) fm.list(root).toSeq else Nil
    def committed(suffix: String): Seq[(VersionFile, FileStatus)] =
      statuses.flatMap(s => Listing.committedFile(s.getPath.getName, suffix).map(_ -> s))
    val snapshots = committed(".snapshot")
    val temporary = statuses.flatMap { s =>
      val n = s.getPath.getName
      Listing.temporaryVersion(n).map(n -> _)
    }.toMap
    Listing(SortedSet.empty[VersionFile] ++ committed(".changelog").map(_._1),
      SortedSet.empty[VersionFile] ++ snapshots.map(_._1),
      snapshots.map { case (f, s) => f -> FileStamp(s.getModificationTime, s.getLen) }.toMap, temporary)
  }

  /**
   * A file visible at `path` once its stream is closed. On the local file system written directly
   * ([[LocalAtomicFile]]: Hadoop's rename forks a process per file there), elsewhere through Spark's
   * CheckpointFileManager.
   */
  def createAtomic(path: Path): AtomicOutput = {
    ensureDirs()
    if (local) AtomicOutput(LocalAtomicFile.create(LocalAtomicFile.localPath(path, hadoopConf)))
    else AtomicOutput(fm.createAtomic(path, overwriteIfPossible = true))
  }

  /**
   * The TTL record of the committed changelog `file`, read to its end; None if it has none or cannot
   * be read (an earlier attempt's file that this attempt will replace).
   */
  def recordedTtl(file: VersionFile): Option[TtlRecord] =
    try {
      val reader = openChangelog(file)
      try {
        while (reader.next().isDefined) {}
        reader.ttl
      } finally reader.close()
    } catch { case NonFatal(_) => None }

  /**
   * Opens the changelog of `file`'s version committed under its checkpoint id (None: format v1); from
   * `local` if given, a whole copy of it fetched before ([[fetchChangelog]]), checked as the original.
   */
  def openChangelog(file: VersionFile, local: Option[File] = None): ChangelogReader = {
    val (version, id) = (file.version, file.id)
    val path = changelogPath(file)
    val in = local.fold(openChangelogFile(file))(new FileInputStream(_))
    val reader =
      try new ChangelogReader(path.toString, version, in)
      catch { case NonFatal(e) => in.close(); throw e }
    if (reader.formatVersion >= 3 && reader.checkpointId != id) {
      reader.close()
      throw TtlStoreErrors.changelogCorrupted(path.toString, version,
        s"it records checkpoint id ${reader.checkpointId.getOrElse("none")}, its name ${id.getOrElse("none")}")
    }
    reader
  }

  private def openChangelogFile(file: VersionFile): InputStream = {
    val path = changelogPath(file)
    try CheckpointReads.open(fm, path)
    catch { case _: FileNotFoundException => throw TtlStoreErrors.changelogMissing(path.toString, file.version) }
  }

  /** Copies the changelog of `file` as it is in the checkpoint to `out`, for [[openChangelog]] to read later. */
  def fetchChangelog(file: VersionFile, out: OutputStream): Unit = {
    val in = openChangelogFile(file)
    try in.transferTo(out)
    finally in.close()
  }

  /** The lineage the changelog of `version` committed under `id` records ([[Lineage]]). */
  def lineageOf(version: Long, id: String): Seq[LineageItem] = {
    val reader = openChangelog(VersionFile(version, Some(id)))
    try reader.lineage
    finally reader.close()
  }

  /**
   * Uploads the local checkpoint in `localDir` as the snapshot of `version`. SSTs already in
   * `uploaded` (same local name and size) and still in the checkpoint are reused, the others are
   * uploaded under new unique names. Returns the manifest and the bytes uploaded.
   *
   * Cleanup may delete a reused SST meanwhile: an upload can run long after its commit, when a newer
   * query run's instance of the store (in another JVM, beyond [[StoreLock]]) has retired the older
   * snapshots that referenced it. So once the manifest is visible (from then on cleanup keeps its
   * SSTs), the reused SSTs that are gone are copied again under the same names. A remote file's marker
   * ([[RemoteMarker]], remote mode) is always the checkpoint's file: one the checkpoint lacks fails the upload.
   */
  def writeSnapshot(file: VersionFile, numRows: Long, ttl: Option[TtlRecord], localDir: File,
      uploaded: Map[String, SstFile]): (SnapshotManifest, Long) = {
    ensureDirs()
    val files = Option(localDir.listFiles()).getOrElse(Array.empty[File]).sortBy(_.getName).toSeq
    val (ssts, others) = files.partition(_.getName.endsWith(".sst"))
    val present = if (uploaded.isEmpty) Set.empty[String] else sstNames()
    var bytes = 0L
    val remote = ssts.filter(RemoteMarker.marks).map(_.getName).toSet
    val reused = ssts.flatMap { f =>
      uploaded.get(f.getName).filter(s => (remote(f.getName) || s.sizeBytes == f.length()) && present(s.dfsName))
        .map(f.getName -> _)
    }.toMap
    remote.filterNot(reused.contains).foreach { name =>
      throw RemoteMarker.notInCheckpoint(name, uploaded.get(name).map(s => sstPath(s.dfsName).toString))
    }
    val sstFiles = ssts.map { f =>
      reused.getOrElse(f.getName, {
          val dfsName = s"${f.getName.stripSuffix(".sst")}-${UUID.randomUUID()}.sst"
          val crc = copyToCheckpoint(f, sstPath(dfsName))
          bytes += f.length()
          SstFile(f.getName, dfsName, f.length(), crc)
        })
    }
    val manifest = SnapshotManifest(FormatVersion, file.version, numRows, sstFiles,
      System.currentTimeMillis(), ttl, file.id)
    val out = createAtomic(snapshotPath(file))
    try SnapshotZip.write(out.stream, manifest, others)
    catch {
      case NonFatal(e) => out.cancel(); throw e
    }
    if (reused.nonEmpty) {
      val now = sstNames()
      ssts.filter(f => reused.get(f.getName).exists(s => !now(s.dfsName))).foreach { f =>
        if (remote(f.getName)) {
          throw RemoteMarker.notInCheckpoint(f.getName, Some(sstPath(reused(f.getName).dfsName).toString))
        }
        copyToCheckpoint(f, sstPath(reused(f.getName).dfsName))
        bytes += f.length()
      }
    }
    (manifest, bytes + out.committedSize())
  }

  /** Reads only the manifest of the snapshot `file`. */
  def readManifest(file: VersionFile): SnapshotManifest = readSnapshot(file, None)

  /**
   * The manifest of the snapshot of `version` as listed with `stamp`, read once per stamp:
   * maintenance asks for the same retained snapshots on every run. Entries of snapshots that are
   * no longer listed are dropped.
   */
  def manifest(file: VersionFile, stamp: FileStamp, listed: Listing): SnapshotManifest = {
    manifests.keySet.removeIf(k => !listed.snapshotStamps.get(k._1).contains(k._2))
    manifests.computeIfAbsent((file, stamp), _ => readManifest(file))
  }

  /**
   * Restores the snapshot `file` into the empty directory `targetDir`: its small files from the
   * zip, then its SST files, `threads` at a time ([[SstDownloads]]). An SST in `reusable` (by local
   * name) with the recorded size and CRC32C is moved into place instead of fetched: the local DB
   * this store held before may share most of its files with the snapshot. Returns the manifest,
   * and the SST files fetched and reused.
   */
  def downloadSnapshot(file: VersionFile, targetDir: File, threads: Int,
      reusable: Map[String, File] = Map.empty): (SnapshotManifest, SstDownloads.Fetched) = {
    val manifest = restoreSmallFiles(file, targetDir)
    (manifest, SstDownloads.fill(targetDir, manifest.sstFiles, threads, reusable)(openSst(_, file.version)))
  }

  /**
   * Restores the small files of the snapshot `file` (MANIFEST, OPTIONS, CURRENT) into the empty directory
   * `targetDir`, without its SST files; returns its manifest.
   */
  def restoreSmallFiles(file: VersionFile, targetDir: File): SnapshotManifest = {
    val manifest = readSnapshot(file, Some(targetDir))
    // A zip whose later entries went missing reads as shorter, not as damaged; RocksDB would then
    // create an empty instance where the snapshot's rows were.
    val current = new File(targetDir, "CURRENT")
    val named = if (current.isFile) Files.readString(current.toPath).trim else ""
    if (!FileNames.isPlain(named) || !new File(targetDir, named).isFile) {
      throw TtlStoreErrors.snapshotCorrupted(snapshotPath(file).toString, file.version,
        if (named.isEmpty) "it holds no RocksDB CURRENT file" else s"its CURRENT names $named, which it does not hold")
    }
    manifest
  }

  /** Opens `sst` of version `version`'s snapshot, with the error that names it as damaged (given the detail). */
  def openSst(sst: SstFile, version: Long): (InputStream, String => Exception) = {
    val path = sstPath(sst.dfsName)
    val in =
      try CheckpointReads.open(fm, path)
      catch { case _: FileNotFoundException => throw TtlStoreErrors.sstMissing(path.toString, version) }
    (in, (detail: String) => TtlStoreErrors.sstCorrupted(path.toString, version, detail))
  }

  /** Ranged reads of `ssts` in the checkpoint, file `i` being `ssts(i)`, bounded by `timeoutMs` ([[CheckpointRangedReads]]). */
  def rangedReads(ssts: Seq[SstFile], timeoutMs: Long): CheckpointRangedReads =
    new CheckpointRangedReads(fm, ssts.map(sst => sstPath(sst.dfsName) -> sst.sizeBytes).toIndexedSeq, timeoutMs)

  def sstFiles(): Seq[FileStatus] = if (fm.exists(sstDir)) fm.list(sstDir).toSeq else Nil

  private def sstNames(): Set[String] = sstFiles().map(_.getPath.getName).toSet

  def delete(path: Path): Unit = fm.delete(path)

  /**
   * Reads a snapshot zip: its manifest, and with `into` its DB files into that directory (without,
   * it stops after the manifest, which is written first).
   */
  private def readSnapshot(file: VersionFile, into: Option[File]): SnapshotManifest = {
    val (version, id) = (file.version, file.id)
    val path = snapshotPath(file)
    def corrupted(detail: String) = TtlStoreErrors.snapshotCorrupted(path.toString, version, detail)
    val in =
      try CheckpointReads.open(fm, path)
      catch { case _: FileNotFoundException => throw corrupted("file missing") }
    try SnapshotZip.read(in, path.toString, version, id, into, FormatVersion)
    finally in.close()
  }

  private def copyToCheckpoint(local: File, path: Path): Long = {
    val out = createAtomic(path)
    val crc =
      try Streams.copyWithCrc(new FileInputStream(local), out.stream)._2
      catch { case NonFatal(e) => out.cancel(); throw e }
    out.stream.close() // publishes the file: only after the whole copy succeeded
    crc
  }

  private def ensureDirs(): Unit = if (!dirsCreated) {
    fm.mkdirs(sstDir)
    dirsCreated = true
  }
}

object CheckpointFiles {
  val DirName = "ttlstore"

  /** The checkpoint format version written into every changelog header and snapshot manifest. */
  val FormatVersion: Int = Changelog.FormatVersion
}
