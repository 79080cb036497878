package io.ttlstore

import java.io.File

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileStatus, FileSystem, Path}
import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization

import io.ttlstore.checkpoint.{CheckpointFiles, CommitLog, Listing, SnapshotUploader, SparkCheckpoint, VersionFile}
import io.ttlstore.config.{ConfigKey, TtlStoreSettings}
import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.legacy.{HdfsProviderFiles, RocksDbProviderFiles}
import io.ttlstore.ttl.ExpiryRule
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.local.{CheckpointFormat, LocalCopy}
import io.ttlstore.store.rocksdb.LocalWorkDirs

/**
 * What `ttlstore inspect` reports about a streaming checkpoint, read without a running query and
 * without writing anything: the provider pinned in the offset log, the stateful operators and their
 * stores and partitions ([[overview]]), and per store and partition ([[store]]) the retained
 * versions, rows, expired rows still stored, legacy rows, bytes on disk, when the newest snapshot was
 * written, the TTL settings recorded with the latest version and ttlstore's format version. Stores written by Spark's own providers
 * are recognised by their files and reported with what the files say.
 *
 * A scan ([[store]] with `scan = true`) rebuilds the latest version in a temporary directory and
 * counts its live rows (those the query sees), its expired rows still stored and its legacy rows;
 * without it, rows are the count recorded with the latest version (`numRowsTotal`) and expired and
 * legacy rows are not counted. Answers are JSON, for the Python CLI.
 */
object CheckpointInspector {
  private implicit val formats: Formats = DefaultFormats

  final case class StoreRef(name: String, partitions: Seq[Int])
  final case class Operator(id: Long, name: Option[String], stores: Seq[StoreRef])
  final case class Overview(
      checkpoint: String,
      provider: Option[String],
      latestBatch: Option[Long],
      lastCommittedBatch: Option[Long],
      operators: Seq[Operator])

  final case class TtlSettings(
      ttlMs: Long,
      updateType: String,
      stateVisibility: String,
      timeCharacteristic: String,
      eventTimeColumn: Option[String],
      judgedAtMs: Option[Long])

  final case class StoreReport(
      operatorId: Long,
      store: String,
      partition: Int,
      /** Whose files the store directory holds: ttlstore, hdfs, rocksdb or none. */
      files: String,
      formatVersion: Option[Int],
      versions: Seq[Long],
      snapshots: Seq[Long],
      latestVersion: Option[Long],
      rows: Option[Long],
      expiredRowsStored: Option[Long],
      legacyRows: Option[Long],
      bytesOnDisk: Long,
      ttl: Option[TtlSettings],
      scanned: Boolean,
      /** When the newest snapshot's file was written (ms since the epoch, the file system's clock). */
      newestSnapshotWrittenAtMs: Option[Long] = None)

  /** Directories inside a partition directory that belong to a store, not name one. */
  private val StoreFileDirs = Set(CheckpointFiles.DirName, "SSTs", "logs", "_metadata")

  /** The checkpoint's provider, batches, operators, stores and partitions, as JSON. */
  def overview(checkpoint: String): String = Serialization.write(readOverview(checkpoint, new Configuration()))

  /** One store partition, as JSON; `scan` rebuilds the latest version to count its rows. */
  def store(checkpoint: String, operatorId: Long, storeName: String, partition: Int, scan: Boolean): String =
    Serialization.write(readStore(checkpoint, operatorId, storeName, partition, scan, new Configuration()))

  def readOverview(checkpoint: String, hadoopConf: Configuration): Overview = {
    val root = new Path(checkpoint)
    val fs = root.getFileSystem(hadoopConf)
    val offsets = new Path(root, "offsets")
    val batches = if (isDir(fs, offsets)) numbered(fs, offsets) else Nil
    if (batches.isEmpty) throw TtlStoreErrors.notACheckpoint(checkpoint, missing = s"$offsets with batch files")
    val latest = batches.max
    val commits = new Path(root, "commits")
    val committed = if (isDir(fs, commits)) numbered(fs, commits) else Nil
    val stateDir = new Path(root, "state")
    val operatorIds = if (isDir(fs, stateDir)) numbered(fs, stateDir).sorted else Nil
    val operators = operatorIds.map { op =>
      val opDir = new Path(stateDir, op.toString)
      val (name, declared) = operatorMetadata(fs, opDir)
      val partitions = numbered(fs, opDir).map(_.toInt).sorted
      val storeNames =
        if (declared.nonEmpty) declared
        else partitions.headOption.toSeq.flatMap(p => storesIn(fs, new Path(opDir, p.toString)))
      Operator(op, name, storeNames.sorted.map(s => StoreRef(s, partitions)))
    }
    Overview(checkpoint, provider(fs, new Path(offsets, latest.toString)), Some(latest),
      committed.reduceOption(_ max _),
      operators)
  }

  def readStore(checkpoint: String, operatorId: Long, storeName: String, partition: Int, scan: Boolean,
      hadoopConf: Configuration): StoreReport = {
    val partDir = new Path(checkpoint, s"state/$operatorId/$partition")
    val storeDir = if (storeName == DefaultStore) partDir else new Path(partDir, storeName)
    val fs = storeDir.getFileSystem(hadoopConf)
    if (!isDir(fs, storeDir)) {
      throw TtlStoreErrors.notACheckpoint(checkpoint, missing = s"the store directory $storeDir")
    }
    val others =
      if (storeName == DefaultStore) storesIn(fs, partDir).filter(_ != DefaultStore).toSet else Set.empty[String]
    // Counted on the raw file system, so that checksum files (.crc) count as the disk they take.
    val raw = fs match { case c: ChecksumFileSystem => c.getRawFileSystem; case other => other }
    val bytes = bytesBelow(raw, storeDir, skip = others)
    val files = new CheckpointFiles(storeDir, hadoopConf)
    if (isDir(fs, files.root)) {
      val committedId =
        (v: Long) => CommitLog.checkpointId(new Path(checkpoint), v - 1, operatorId, partition, storeName, hadoopConf)
      ttlstoreReport(files, operatorId, storeName, partition, scan, bytes, committedId)
    } else {
      // A store of Spark's own providers, described by the files its reader reads.
      val (zips, rocksChangelogs) = new RocksDbProviderFiles(storeDir, hadoopConf).versions()
      val (deltas, hdfsSnapshots) = new HdfsProviderFiles(storeDir, hadoopConf).versions()
      val (kind, all, snaps) =
        if (zips.nonEmpty || rocksChangelogs.nonEmpty) ("rocksdb", zips ++ rocksChangelogs, zips)
        else if (deltas.nonEmpty || hdfsSnapshots.nonEmpty) ("hdfs", deltas ++ hdfsSnapshots, hdfsSnapshots)
        else ("none", Set.empty[Long], Set.empty[Long])
      val retained = all.toSeq.sorted
      StoreReport(operatorId, storeName, partition, kind, None, retained, snaps.toSeq.sorted,
        retained.lastOption, None, None, None, bytes, None, scanned = false)
    }
  }

  private val DefaultStore = "default"

  /**
   * The latest version of a ttlstore store and its file's checkpoint id. Under checkpoint format v2
   * a version may have files of several attempts; the one Spark's commit log names counts, so the
   * latest version is the newest one the commit log names (or, before any commit names one, the
   * newest version with a single attempt).
   */
  private def latestFile(listing: Listing, committedId: Long => Option[String]): Option[VersionFile] =
    if (!listing.hasCheckpointIds) listing.latest.map(VersionFile(_, None))
    else {
      val all = (listing.changelogFiles ++ listing.snapshotFiles).toSeq
      val byVersion = all.groupBy(_.version).toSeq.sortBy(-_._1)
      byVersion.view.flatMap { case (v, attempts) =>
        committedId(v).map(id => VersionFile(v, Some(id))).filter(f => attempts.contains(f))
      }.headOption.orElse(byVersion.collectFirst { case (_, Seq(only)) => only })
    }

  private def ttlstoreReport(files: CheckpointFiles, operatorId: Long, storeName: String, partition: Int,
      scan: Boolean, bytes: Long, committedId: Long => Option[String]): StoreReport = {
    val listing = files.listing()
    val latestOne = latestFile(listing, committedId)
    val latest = latestOne.map(_.version)
    // The latest version's record: from its changelog, or its snapshot when only that is left.
    val (format, rows, record) = latestOne match {
      case None => (None, Some(0L), None)
      case Some(f) if listing.changelogFiles.contains(f) =>
        val reader = files.openChangelog(f)
        try {
          reader.readAll()
          (Some(reader.formatVersion), Some(reader.rowsAfter), reader.ttl)
        } finally reader.close()
      case Some(f) =>
        val m = files.readManifest(f)
        (Some(m.formatVersion), Some(m.numRows), m.ttl)
    }
    val settings = record.flatMap { r =>
      r.policy.map { p =>
        TtlSettings(p.ttlMs, p.updateType.name, p.visibility.name, p.timeCharacteristic.name,
          p.eventTimeColumn, r.judgedAtMs)
      }
    }
    val base = StoreReport(operatorId, storeName, partition, "ttlstore", format,
      (listing.changelogs ++ listing.snapshots).toSeq, listing.snapshots.toSeq, latest, rows, None, None,
      bytes, settings, scanned = false,
      listing.snapshotFiles.lastOption.flatMap(listing.snapshotStamps.get).map(_.modificationTime))
    latestOne.filter(_ => scan) match {
      case None => base
      case Some(f) =>
        val counts = count(files, storeName, f, settings)
        base.copy(rows = Some(counts.rows), expiredRowsStored = Some(counts.expired),
          legacyRows = Some(counts.legacy), scanned = true)
    }
  }

  private final case class Counts(rows: Long, expired: Long, legacy: Long)

  /** Rebuilds `version` in a temporary directory and counts live, expired and legacy rows. */
  private def count(files: CheckpointFiles, storeName: String, file: VersionFile, ttl: Option[TtlSettings]): Counts = {
    val settings = TtlStoreSettings.parse(Map.empty)
    val workDir = LocalWorkDirs.create(new File(System.getProperty("java.io.tmpdir")))
    val format = CheckpointFormat.of(v2 = file.id.isDefined)
    val local = new LocalCopy(s"inspect of $storeName", workDir, settings, format, files, new SnapshotUploader(files))
    try {
      local.load(file, loadEmpty = false)
      val ttlMs = ttl.map(_.ttlMs).getOrElse(0L)
      val now = ttl.flatMap(_.judgedAtMs).getOrElse(Long.MinValue)
      var live = 0L
      var expired = 0L
      val it = local.db.newIterator()
      try {
        it.seekToFirst()
        while (it.isValid) {
          if (ExpiryRule.isExpired(TimestampedValue.timestamp(it.value()), ttlMs, now)) expired += 1
          else live += 1
          it.next()
        }
      } finally it.close()
      // The store's own count, recorded with the version: the legacy family holds keys as Spark's
      // provider encoded them, which a rebuild without the query's key schema cannot match.
      Counts(live, expired, local.legacyRows)
    } finally {
      try local.close()
      finally LocalWorkDirs.release(workDir)
    }
  }

  private def isDir(fs: FileSystem, p: Path): Boolean = fs.exists(p) && fs.getFileStatus(p).isDirectory

  private def numbered(fs: FileSystem, dir: Path): Seq[Long] = SparkCheckpoint.batchIds(fs, dir)

  /** The store names of a partition directory: `default` if it holds store files itself, plus subdirectories. */
  private def storesIn(fs: FileSystem, partDir: Path): Seq[String] = {
    val entries = fs.listStatus(partDir).toSeq
    val named = entries.filter(s => s.isDirectory && !StoreFileDirs.contains(s.getPath.getName)).map(_.getPath.getName)
    val hasDefault = entries.exists(s => s.isFile || StoreFileDirs.contains(s.getPath.getName))
    (if (hasDefault) Seq(DefaultStore) else Nil) ++ named
  }

  /** Operator name and store names from Spark's operator metadata (`_metadata/metadata`), if written. */
  private def operatorMetadata(fs: FileSystem, opDir: Path): (Option[String], Seq[String]) =
    try {
      val meta = SparkCheckpoint.operatorMetadata(fs, opDir)
      (meta.flatMap(_.name), meta.toSeq.flatMap(_.stores.map(_.name)).distinct)
    } catch { case NonFatal(_) => (None, Nil) }

  /** The state store provider pinned in an offset-log entry (absent before Spark pinned it). */
  private def provider(fs: FileSystem, entry: Path): Option[String] =
    try { (SparkCheckpoint.jsonAfterVersionLine(fs, entry) \ "conf" \ ConfigKey.SparkProviderKey).extractOpt[String] }
    catch { case NonFatal(_) => None }

  private def bytesBelow(fs: FileSystem, dir: Path, skip: Set[String]): Long =
    fs.listStatus(dir).toSeq.map { s: FileStatus =>
      if (s.isFile) s.getLen
      else if (skip.contains(s.getPath.getName)) 0L
      else bytesBelow(fs, s.getPath, Set.empty)
    }.sum
}
