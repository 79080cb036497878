package io.ttlstore

import java.io.File
import java.util.UUID

import org.apache.commons.io.FileUtils

/**
 * The working copy of one store on local disk: a RocksDB instance and the committed version it holds.
 *
 * Loading version v restores the newest snapshot at or below v (or starts empty) and replays the
 * changelogs after it; when the local copy already holds a committed version between that snapshot
 * and v, only the missing changelogs are replayed. After an abort the copy is no longer trusted and
 * the next load restores it from the checkpoint.
 */
final class LocalStore(
    storeName: String,
    workDir: File,
    settings: TtlStoreSettings,
    files: CheckpointFiles,
    snapshots: SnapshotUploader) extends AutoCloseable {

  private val dbDir = new File(workDir, "db")
  private val checkpointsDir = new File(workDir, "checkpoints")
  private var handle: RocksDbHandle = _
  /** The committed version the local DB holds; -1 when it holds nothing trustworthy. */
  private var loadedVersion: Long = -1L
  private var rows: Long = 0L
  /** The newest version for which a snapshot exists or is queued for upload. */
  private var lastSnapshotVersion: Long = 0L
  /** What this version's reads and writes learned about keys; cleared whenever the DB changes otherwise. */
  val knownKeys = new KnownKeys(settings.knownKeysCapacity)
  /** The timestamps of the stored rows; changed in place by the store version being written. */
  private var histogram = TimestampHistogram.empty()
  /** The largest event time seen up to the loaded version; Long.MinValue before any. */
  private var streamTimeMs = Long.MinValue
  private var recordedTtl: Option[TtlRecord] = None
  /** Where the incremental sweep resumes (None: at the first key). Not persisted. */
  var sweepCursor: Option[Array[Byte]] = None

  def db: RocksDbHandle = handle
  def directory: File = workDir
  def version: Long = loadedVersion
  def numRows: Long = rows
  def timestamps: TimestampHistogram = histogram
  def streamTime: Long = streamTimeMs
  /** The TTL record of the loaded version; None when it predates TTL records or nothing was committed. */
  def recorded: Option[TtlRecord] = recordedTtl

  /** Makes the local DB hold committed version `version`; returns the changelogs replayed. */
  def load(version: Long, loadEmpty: Boolean): Int = {
    if (handle != null && version == loadedVersion && !loadEmpty) return 0
    // The DB is about to change other than through the stores' recorded puts and removes.
    knownKeys.clear()
    if (loadEmpty) {
      restore(None)
      loadedVersion = version
      lastSnapshotVersion = version
      0
    } else {
      val listing = files.listing()
      if (version > 0 && !listing.changelogs.contains(version) && !listing.snapshots.contains(version)) {
        throw TtlStoreErrors.versionNotFound(files.root.toString, version, listing.latest)
      }
      val base = listing.snapshots.rangeTo(version).lastOption.getOrElse(0L)
      val from =
        if (handle != null && loadedVersion >= base && loadedVersion < version) loadedVersion
        else { restore(if (base > 0) Some(base) else None); base }
      loadedVersion = -1L
      var replayed = 0
      (from + 1 to version).foreach { v => replay(v); replayed += 1 }
      if (recordedTtl.isEmpty && rows > 0) rebuildTimestamps()
      loadedVersion = version
      replayed
    }
  }

  /** Records that the DB now holds committed `version` with `numRows` rows, described by `ttl`. */
  def committed(version: Long, numRows: Long, ttl: TtlRecord): Unit = {
    loadedVersion = version
    rows = numRows
    streamTimeMs = ttl.streamTimeMs.getOrElse(Long.MinValue)
    recordedTtl = Some(ttl)
    knownKeys.clear()
  }

  /** Forgets the loaded version: the DB has changes that were not committed. */
  def invalidate(): Unit = loadedVersion = -1L

  def snapshotDue(version: Long, minDeltas: Int): Boolean = version - lastSnapshotVersion >= minDeltas

  /** Takes a local checkpoint of the DB as committed `version` and queues it for upload. */
  def snapshot(version: Long): Unit = {
    checkpointsDir.mkdirs()
    val dir = new File(checkpointsDir, s"$version-${UUID.randomUUID()}")
    handle.checkpointTo(dir)
    snapshots.offer(version, rows, recordedTtl, dir)
    lastSnapshotVersion = version
  }

  override def close(): Unit = {
    if (handle != null) handle.close()
    handle = null
    loadedVersion = -1L
    LocalWorkDirs.release(workDir)
  }

  private def restore(snapshotVersion: Option[Long]): Unit = {
    if (handle != null) handle.close()
    handle = null
    loadedVersion = -1L
    FileUtils.deleteQuietly(dbDir)
    dbDir.mkdirs()
    val manifest = snapshotVersion.map(v => files.downloadSnapshot(v, dbDir))
    handle = RocksDbHandle.open(dbDir, storeName, settings)
    rows = manifest.map(_.numRows).getOrElse(0L)
    adopt(manifest.flatMap(_.ttl))
    sweepCursor = None
    lastSnapshotVersion = snapshotVersion.getOrElse(0L)
    snapshots.reset(manifest)
  }

  private def replay(version: Long): Unit = {
    val reader = files.openChangelog(version)
    val batch = handle.newBatch()
    try {
      var record = reader.next()
      while (record.isDefined) {
        record.get match {
          case Changelog.Put(k, v) => batch.put(k, v)
          case Changelog.Delete(k) => batch.delete(k)
        }
        if (batch.count >= LocalStore.ReplayBatchRecords) batch.flushTo()
        record = reader.next()
      }
      batch.flushTo()
      rows = reader.rowsAfter
      adopt(reader.ttl)
    } finally {
      batch.close()
      reader.close()
    }
  }

  private def adopt(ttl: Option[TtlRecord]): Unit = {
    recordedTtl = ttl
    histogram = ttl.map(_.timestamps).getOrElse(TimestampHistogram.empty())
    streamTimeMs = ttl.flatMap(_.streamTimeMs).getOrElse(Long.MinValue)
  }

  /** Versions written before TTL records (format 1) carry no histogram: count the rows once. */
  private def rebuildTimestamps(): Unit = {
    val h = TimestampHistogram.empty()
    val it = handle.newIterator()
    try {
      it.seekToFirst()
      while (it.isValid) {
        val v = it.value()
        if (TimestampedValue.hasTimestamp(v)) h.add(TimestampedValue.timestamp(v))
        it.next()
      }
    } finally it.close()
    histogram = h
  }
}

object LocalStore {
  private val ReplayBatchRecords = 10000
}
