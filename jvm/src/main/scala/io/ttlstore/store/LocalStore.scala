package io.ttlstore.store

import java.io.File
import java.util.UUID

import scala.util.control.NonFatal

import org.apache.commons.io.FileUtils
import org.apache.spark.internal.Logging

import io.ttlstore
  .checkpoint.{AdoptionRecord, ChangelogWriter, CheckpointFiles, SnapshotUploader, TtlRecord, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.errors.{TtlStoreErrors, TtlStoreException}
import io.ttlstore.legacy.LegacySource
import io.ttlstore.ttl.{Clock, SystemClock, TimestampHistogram}

/**
 * The working copy of one store on local disk: a RocksDB instance and the committed version it holds.
 *
 * Loading version v restores the newest snapshot at or below v (or starts empty) and replays the
 * changelogs after it; when the local copy already holds a committed version between that snapshot
 * and v, only the missing changelogs are replayed. After an abort the copy is no longer trusted and
 * the next load restores it from the checkpoint.
 *
 * Under checkpoint format v2 a version is loaded by its checkpoint id ([[VersionLoads]]).
 */
final class LocalStore(
    storeName: String,
    workDir: File,
    settings: TtlStoreSettings,
    files: CheckpointFiles,
    snapshots: SnapshotUploader,
    /** The native TTL filter for each DB this store opens; None: the JVM sweep removes expired rows. */
    newFilter: () => Option[TtlCompactionFilter] = () => None,
    /** Processing time, read once when a store adopts Spark's state (its `migration` stamp). */
    clock: Clock = SystemClock,
    /** A legacy key of Spark's `provider` ("hdfs", "rocksdb") as this store encodes keys. */
    legacyKey: (String, Array[Byte]) => Array[Byte] = (_, k) => k,
    /** The codec Spark's provider compressed its files with (spark.sql.streaming.stateStore.compression.codec). */
    stateCodec: String = "lz4") extends AutoCloseable with LoadTarget with LocalCopyView with Logging {

  private val dbDir = new File(workDir, "db")
  private val checkpointsDir = new File(workDir, "checkpoints")
  @volatile private var handle: RocksDbHandle = _

  /** The committed version the local DB holds; -1 when it holds nothing trustworthy. */
  private var loadedVersion: Long = -1L
  private val state = new CommittedState

  /** The newest version for which a snapshot exists or is queued for upload. */
  private var lastSnapshotVersion: Long = 0L

  /** What this version's reads and writes learned about keys; cleared whenever the DB changes otherwise. */
  val knownKeys = new KnownKeys(settings.knownKeysCapacity)

  /** Compactions asked for by commits that found many rows expired (see [[compactIfWanted]]). */
  private val upkeep = new FilterUpkeep

  /** Held while maintenance compacts, and to close or replace the DB: never closed mid-compaction. */
  private val dbLock = new Object

  /** Where the incremental sweep resumes (None: at the first key). Not persisted. */
  private var sweepCursor: Option[Array[Byte]] = None

  /** Where the bounded upgrade at commit resumes (None: the first legacy key; none is left before it). */
  private var upgradeCursor: Option[Array[Byte]] = None

  private val adoptions = new Adoptions(files, workDir, stateCodec, clock, legacyKey)

  /** Checkpoint format v2: the held version's id and lineage, and the id the next commit writes under. */
  private val ids = new CheckpointIds
  private val loads = new VersionLoads(files, adoptions, ids, this, settings.snapshotRepair)

  def db: RocksDbHandle = handle
  def directory: File = workDir
  def version: Long = loadedVersion
  def numRows: Long = state.rows
  def timestamps: TimestampHistogram = state.timestamps
  def streamTime: Long = state.streamTime
  def countedFrom: Long = state.countedFrom
  def legacyRows: Long = state.legacyRows
  def adoption: Option[AdoptionRecord] = adoptions.current
  def sweepResumesAt: Option[Array[Byte]] = sweepCursor
  def upgradeResumesAt: Option[Array[Byte]] = upgradeCursor

  /**
   * The changelog of `version`, written atomically into the checkpoint when committed; under
   * checkpoint format v2 named by and recording checkpoint id `id`, with the held version's lineage.
   */
  def newChangelog(version: Long, id: Option[String], codec: String): ChangelogWriter = {
    val lineage = if (id.isEmpty) Nil else ids.lineageToRecord(snapshots.newestUploaded)
    new ChangelogWriter(files.createAtomic(files.changelogPath(version, id)), codec, id, lineage)
  }

  /** The checkpoint id of the loaded version (format v2; None in format v1 and at version 0). */
  def loadedCheckpointId: Option[String] = ids.loaded

  /** The checkpoint id the version opened on the loaded one commits under (format v2; else None). */
  def sessionCheckpointId: Option[String] = ids.session

  /** With the native filter: rows uncounted as expired that are probably still on disk (an estimate). */
  def expiredOnDisk: Long = upkeep.expiredOnDisk

  /** See [[FilterUpkeep.expired]]: true if the commit asks maintenance for a compaction. */
  def expiredUncounted(dropped: Long, storedRows: Long, share: Double): Boolean =
    upkeep.expired(dropped, storedRows, share)

  /** The snapshot uploads finished since the previous call. */
  def takeSnapshotUploads(): SnapshotUploader.Upload = snapshots.takeUploads()

  /** Writes adopted.json before the first commit after an adoption (read-only readers never do). */
  def persistAdoption(): Unit = adoptions.persist()

  /** True when the open DB has the native filter: expired rows leave it while RocksDB compacts. */
  def usesFilter: Boolean = handle != null && handle.filter.isDefined

  /** Tells the native filter the TTL and "now" of the version about to be read or written. */
  def pushTime(ttlMs: Long, now: Long): Unit = if (handle != null) handle.filter.foreach { f =>
    f.setTtl(ttlMs)
    f.setNow(now)
  }

  /** Rows the native filter removed since the previous call (from any version of any key). */
  def takeFilterRemoved(): Long =
    if (handle == null) 0L else handle.filter.map(f => upkeep.removedSince(f.removedRows)).getOrElse(0L)

  /**
   * The "now" an earlier attempt of the batch after the loaded version judged by, if that attempt
   * committed this store (the batch failed later, and Spark runs it again): the replay judges the
   * same. Known only when the load listed the checkpoint; a local copy that already held the version
   * serves a first attempt.
   */
  def earlierAttemptNow(version: Long): Option[Long] =
    if (version != loadedVersion) None
    else {
      loads.earlierAttempts(version).flatMap(f => files.recordedTtl(f.version, f.id).flatMap(_.nowMs))
        .find(_ => true)
    }

  /** The TTL record of the loaded version; None when it predates TTL records or nothing was committed. */
  def recorded: Option[TtlRecord] = state.recorded

  /**
   * Makes the local DB hold committed version `version`; returns the changelogs replayed. Under format
   * v2 (`withIds`) the version is the one committed under `checkpointId` (None only for version 0).
   */
  def load(version: Long, loadEmpty: Boolean, checkpointId: Option[String] = None, withIds: Boolean = false): Int =
    InjectedLeak.after(settings, workDir, () => handle)(loads.load(version, loadEmpty, checkpointId, withIds))

  /** Loads built around a snapshot that failed to load (autoSnapshotRepair) since the previous call. */
  def takeSnapshotsRepaired(): Int = loads.takeRepaired()

  /**
   * Makes the local DB hold committed version `endVersion` built from the snapshot of
   * `snapshotVersion` and the changelogs after it, whatever else exists (Spark's state reader with
   * `snapshotStartBatchId`); returns the changelogs replayed.
   */
  def loadFromSnapshot(snapshotVersion: Long, endVersion: Long, snapshotId: Option[String] = None,
      endId: Option[String] = None): Int = loads.fromSnapshot(snapshotVersion, endVersion, snapshotId, endId)

  /**
   * Replays the changelogs after `from` (held by the DB) up to `version`, each the one committed under
   * the checkpoint id `idOf` gives; returns how many.
   */
  override def replayUpTo(from: Long, version: Long, idOf: Long => Option[String]): Int = {
    loadedVersion = -1L
    (from + 1 to version).foreach(v => replay(v, idOf(v)))
    if (state.recorded.isEmpty && state.rows > 0) state.rebuilt(Replay.timestamps(handle))
    loadedVersion = version
    (version - from).toInt
  }

  /**
   * Records that the DB now holds committed `version` with `numRows` rows, described by `ttl`, and
   * where the next version's sweep and upgrade resume.
   */
  def committed(version: Long, numRows: Long, ttl: TtlRecord, sweepFrom: Option[Array[Byte]],
      upgradeFrom: Option[Array[Byte]]): Unit = {
    sweepCursor = sweepFrom
    upgradeCursor = upgradeFrom
    loadedVersion = version
    loads.committed()
    ids.committed(version)
    state.committed(numRows, ttl)
    knownKeys.clear()
  }

  /**
   * After a load with a TTL other than the recorded one: rows uncounted as expired under the old
   * TTL may be alive under the new one, so the rows and their timestamps are counted again (one
   * scan) and everything stored counts from here on.
   */
  def recountIfTtlChanged(ttlMs: Long): Boolean =
    if (state.countedFrom == Long.MinValue || state.recorded.forall(_.ttlMs == ttlMs)) false
    else {
      state.recounted(Replay.timestamps(handle))
      knownKeys.clear()
      true
    }

  /** Forgets the loaded version: the DB has changes that were not committed. */
  def invalidate(): Unit = {
    loadedVersion = -1L
    ids.clear()
  }

  def snapshotDue(version: Long, minDeltas: Int): Boolean = version - lastSnapshotVersion >= minDeltas

  /** [[snapshot]], logging a failure instead of failing the commit: the changelogs keep the state recoverable. */
  def snapshotQuietly(version: Long): Unit =
    try snapshot(version)
    catch {
      case NonFatal(e) =>
        logWarning(s"Could not take a local snapshot of version $version of $storeName; " +
            "the changelogs keep the state recoverable", e)
    }

  /** Takes a local checkpoint of the DB as committed `version` and queues it for upload. */
  def snapshot(version: Long): Unit = {
    checkpointsDir.mkdirs()
    val dir = new File(checkpointsDir, s"$version-${UUID.randomUUID()}")
    handle.checkpointTo(dir)
    snapshots.offer(version, ids.loaded, state.rows, state.recorded, dir)
    lastSnapshotVersion = version
  }

  /**
   * Maintenance: compacts the DB if a commit asked for it, so that the native filter drops the
   * expired rows of files no compaction would otherwise touch. Returns whether it compacted.
   */
  def compactIfWanted(): Boolean = dbLock.synchronized {
    val h = handle
    if (h == null || h.isClosed || !upkeep.takeRequest()) false
    else {
      h.compactNow()
      upkeep.compacted()
      true
    }
  }

  override def close(): Unit = {
    closeDb()
    loadedVersion = -1L
    LocalWorkDirs.release(workDir)
  }

  private def closeDb(): Unit = dbLock.synchronized {
    if (handle != null) handle.close()
    handle = null
  }

  override def isOpen: Boolean = handle != null

  override def forgetKnownKeys(): Unit = knownKeys.clear()

  override def adopt(record: AdoptionRecord, source: LegacySource): Unit =
    state.adopted(adoptions.adopt(record, source, handle))

  override def emptyAt(version: Long): Unit = {
    loadedVersion = version
    lastSnapshotVersion = version
  }

  override def restore(snapshot: Option[VersionFile]): Unit = {
    closeDb()
    loadedVersion = -1L
    ids.clear()
    FileUtils.deleteQuietly(dbDir)
    dbDir.mkdirs()
    val snapshotVersion = snapshot.map(_.version)
    val manifest = snapshot.map(f =>
      LocalDiskFull.named(storeName, dbDir,
        s"download the snapshot of version ${f.version}")(files.downloadSnapshot(f.version, dbDir, f.id)))
    handle =
      try RocksDbHandle.open(dbDir, storeName, settings, newFilter())
      catch {
        case e: TtlStoreException if snapshotVersion.isDefined && RocksDbHandle.isCorruption(e) =>
          val v = snapshotVersion.get
          throw TtlStoreErrors.snapshotCorrupted(files.snapshotPath(v, snapshot.get.id).toString, v,
            s"its files do not open as a RocksDB instance: ${e.getCause.getMessage}")
      }
    upkeep.reset()
    state.restored(manifest.map(_.numRows).getOrElse(0L), manifest.flatMap(_.ttl))
    sweepCursor = None
    upgradeCursor = None
    lastSnapshotVersion = snapshotVersion.getOrElse(0L)
    snapshots.reset(manifest)
  }

  private def replay(version: Long, id: Option[String]): Unit = {
    val reader = files.openChangelog(version, id)
    try {
      Replay.changelog(reader, handle, state.legacyRows > 0)
      state.replayed(reader.rowsAfter, reader.ttl)
    } finally reader.close()
  }
}
