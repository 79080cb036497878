package io.ttlstore.store.local

import java.io.File
import java.util.UUID

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore
  .checkpoint.{AdoptionRecord, ChangelogWriter, CheckpointFiles, SnapshotUploader, SstDownloads, TtlRecord, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.errors.{DiskFull, FileSystemFailure, TtlStoreErrors, TtlStoreException}
import io.ttlstore.ttl.{Clock, SystemClock, TimestampHistogram}
import io.ttlstore.store.nativelib.TtlCompactionFilter
import io.ttlstore.store.rocksdb.{LocalWorkDirs, RocksDbHandle}

/**
 * The working copy of one store on local disk: a RocksDB instance and the committed version it holds.
 *
 * [[VersionLoads]] plans each load from the checkpoint's files (a base, the changelogs after it, the
 * older bases snapshot repair may take, as data); [[load]] carries the plan out, in one place: it
 * restores the base (repairing around a snapshot that fails to load), replays the changelogs, and
 * records what the copy now holds. Where the SST files live ([[FileLocality]]) and how versions are
 * named ([[CheckpointFormat]]) are chosen once, when the store opens. After an abort the
 * copy is no longer trusted and the next load restores it. The checkpoint format (by version, or by
 * checkpoint id) is the store's for its life.
 */
final class LocalCopy(
    storeName: String,
    workDir: File,
    settings: TtlStoreSettings,
    /** How versions are named and loaded: by version (format v1) or by checkpoint id (format v2). */
    val format: CheckpointFormat,
    files: CheckpointFiles,
    snapshots: SnapshotUploader,
    /** The native TTL filter for each DB this store opens; None: the JVM sweep removes expired rows. */
    newFilter: () => Option[TtlCompactionFilter] = () => None,
    /** Processing time, read once when a store adopts Spark's state (its `migration` stamp). */
    clock: Clock = SystemClock,
    /** A legacy key of Spark's `provider` ("hdfs", "rocksdb") as this store encodes keys. */
    legacyKey: (String, Array[Byte]) => Array[Byte] = (_, k) => k,
    /** The codec Spark's provider compressed its files with (spark.sql.streaming.stateStore.compression.codec). */
    stateCodec: String = "lz4") extends AutoCloseable with LocalCopyView with Logging {

  /** Where the store's SST files live while the DB reads them: chosen once, here. */
  val locality: FileLocality = FileLocality.choose(storeName, settings, files, () => snapshots.uploadedFiles)
  private val dbDir = new DbDirectory(workDir, storeName, locality, snapshots)
  private val changelogs = new ChangelogPrefetch(files, workDir, settings.downloadThreads)
  private val checkpointsDir = new File(workDir, "checkpoints")
  @volatile private var handle: RocksDbHandle = _

  /** The committed version the local DB holds, with its checkpoint id and lineage under format v2. */
  private val held = new HeldVersion
  private val state = new CommittedState

  /** The newest version for which a snapshot exists or is queued for upload. */
  private var lastSnapshotVersion: Long = 0L

  /**
   * What this version's reads and writes learned about keys (cleared whenever the DB changes otherwise), and the keys
   * the DB certainly does not hold (while it stays open; no scan for them in remote mode).
   */
  val knownKeys = new KnownKeys(settings.knownKeysCapacity)
  val keyIndex = new KeyIndex(scans = locality.scansKeys)
  val readAheadUse = new ReadAheadUse

  /** Compactions asked for by commits that found many rows expired (see [[compactIfWanted]]). */
  private val upkeep = new FilterUpkeep

  /** Held while maintenance compacts, and to close or replace the DB: never closed mid-compaction. */
  private val dbLock = new Object

  /** Where the incremental sweep and the bounded upgrade at commit resume (None: at the first key). Not persisted. */
  private var sweepCursor: Option[Array[Byte]] = None
  private var upgradeCursor: Option[Array[Byte]] = None

  private val adoptions = new Adoptions(files, workDir, stateCodec, clock, legacyKey)
  private val loads = new VersionLoads(files, adoptions, format, settings.snapshotRepair)

  /** How many loads were repaired around a snapshot that failed to load, since the previous call. */
  private var repaired = 0

  def db: RocksDbHandle = handle
  def directory: File = workDir

  /** What the store holds on disk now, and the newest of its snapshots it knows the checkpoint holds. */
  def footprint: StoreFootprint =
    StoreFootprint(snapshots.newestInCheckpoint, StoreFootprint.bytesIn(dbDir.dir),
      Option(handle).flatMap(_.lazyFiles).fold(0)(_.filesNotLocal))
  def version: Long = held.version
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
  def newChangelog(file: VersionFile, codec: String): ChangelogWriter = {
    val lineage = if (file.id.isEmpty) Nil else held.lineageToRecord(snapshots.newestUploaded)
    new ChangelogWriter(files.createAtomic(files.changelogPath(file)), codec, file.id, lineage)
  }

  /** The checkpoint id of the loaded version (format v2; None in format v1 and at version 0). */
  def loadedCheckpointId: Option[String] = held.loaded

  /** The checkpoint id the version opened on the loaded one commits under (format v2; else None). */
  def sessionCheckpointId: Option[String] = held.session

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
    held.file.filter(_.version == version).flatMap { h =>
      loads.builtOn(held.nextVersionFiles, h).flatMap(f => files.recordedTtl(f).flatMap(_.nowMs)).find(_ => true)
    }

  /** The TTL record of the loaded version; None when it predates TTL records or nothing was committed. */
  def recorded: Option[TtlRecord] = state.recorded

  /**
   * Makes the local DB hold committed version `target` (by checkpoint id, the version committed under
   * its id; version 0 has none), or with `loadEmpty` the empty state as that version; returns the
   * changelogs replayed. [[VersionLoads]] plans; the plan is carried out here ([[carryOut]]), once more
   * from a new listing if it failed after a cleanup changed the checkpoint under it.
   */
  def load(target: VersionFile, loadEmpty: Boolean): Int = {
    val first = loads.plan(target, loadEmpty, heldFile)
    val replayed =
      try carryOut(first.plan)
      catch {
        case NonFatal(e) if first.listing.exists(loads.changedSince(_, e)) =>
          logInfo(s"The checkpoint ${files.root} changed while version ${target.version} loaded (files it listed " +
            s"were deleted by a cleanup); loading again from a new listing: ${e.getMessage}")
          carryOut(loads.plan(target, loadEmpty, heldFile).plan)
      }
    settings.hooks.afterLoad(workDir)
    replayed
  }

  /** What the copy holds that a plan may build on (None: nothing trustworthy). */
  private def heldFile: Option[VersionFile] = held.file.filter(_ => handle != null)

  /** Loads built around a snapshot that failed to load (autoSnapshotRepair) since the previous call. */
  def takeSnapshotsRepaired(): Int = { val n = repaired; repaired = 0; n }

  /** The SST files restores fetched and reused since the previous call. */
  def takeFetched(): SstDownloads.Fetched = dbDir.takeFetched()

  /**
   * Makes the local DB hold committed version `end` built from `snapshot` and the changelogs after it,
   * whatever else exists (Spark's state reader with `snapshotStartBatchId`); returns the changelogs replayed.
   */
  def loadFromSnapshot(snapshot: VersionFile, end: VersionFile): Int = carryOut(loads.fromSnapshot(snapshot, end))

  /**
   * Carries out a load's plan, step by step: restores its base ([[restoreBase]]), replays its changelogs, records
   * what the copy holds.
   */
  private def carryOut(plan: LoadPlan): Int = plan match {
    case LoadPlan.Reuse =>
      held.reopened()
      0
    case p: LoadPlan.Build =>
      knownKeys.clear()
      changelogs.start(p.route)
      try {
        val route = restoreBase(p)
        held.forget()
        route.changelogs.foreach(replay)
        if (state.recorded.isEmpty && state.rows > 0) state.rebuilt(Replay.timestamps(handle))
        held.built(p.version, route.lineage, p.nextVersion)
        route.changelogs.size
      } finally changelogs.clear()
  }

  /**
   * Restores the base of the plan's route; once its snapshot failed to load [[SnapshotRepair.attemptsBeforeRepair]]
   * times, the base of the first of the plan's fallbacks that restores, newest first (Spark's
   * `autoSnapshotRepair`). Returns the route whose base was restored.
   */
  private def restoreBase(plan: LoadPlan.Build): Route = {
    val attempts = if (plan.route.snapshot.isEmpty) 1 else math.max(1, settings.snapshotRepair.attemptsBeforeRepair)
    val failed = Iterator.continually(Try(restoreFrom(plan.route.base))).take(attempts).takeWhile(_.isFailure).toVector
    if (failed.size < attempts) plan.route else repairAround(plan, failed.last.failed.get)
  }

  /** The route of the first of the plan's fallbacks whose base restores, once its snapshot failed with `failure`. */
  private def repairAround(plan: LoadPlan.Build, failure: Throwable): Route = {
    val repair = settings.snapshotRepair
    // Only a snapshot is repaired around; a full local disk or a file system that does not answer is no damage of
    // the snapshot's, and with nothing older to build from at all the snapshot's own error names what to restore.
    if (plan.route.snapshot.isEmpty || !repair.enabled || DiskFull.in(failure) || FileSystemFailure.in(failure) ||
      !plan.repair.anyOlder) throw failure
    val path = files.snapshotPath(plan.route.snapshot.get).toString
    val built = plan.repair.fallbacks.iterator
      .map(f => Try { val route = loads.route(f); restoreFrom(route.base); route }.toOption)
      .collectFirst { case Some(route) => route }
      .getOrElse(throw TtlStoreErrors.snapshotRepairFailed(path, plan.version, plan.route.base.version,
          plan.repair.fallbacks.map(_.base), repair.maxChangelogReplay, failure))
    val base = built.base.version
    logWarning(s"The snapshot of version ${plan.route.base.version} ($path) failed to load; built version " +
      s"${plan.version} from ${if (base == 0) "the empty state" else s"version $base"} and the changelogs after it " +
      s"instead (autoSnapshotRepair): ${failure.getMessage}")
    repaired += 1
    built
  }

  private def restoreFrom(base: LoadBase): Unit = base match {
    case LoadBase.Held(_) => ()
    case LoadBase.Empty(version) =>
      restore(None)
      keyIndex.startEmpty()
      lastSnapshotVersion = version
    case LoadBase.Snapshot(file) => restore(Some(file))
    case LoadBase.Adopted(record, source) =>
      restore(None)
      state.adopted(adoptions.adopt(record, source, handle))
  }

  /**
   * Records that the DB now holds committed `version` with `numRows` rows, described by `ttl`, and
   * where the next version's sweep and upgrade resume.
   */
  def committed(version: Long, numRows: Long, ttl: TtlRecord, sweepFrom: Option[Array[Byte]],
      upgradeFrom: Option[Array[Byte]]): Unit = {
    sweepCursor = sweepFrom
    upgradeCursor = upgradeFrom
    held.committed(version)
    state.committed(numRows, ttl)
    knownKeys.clear()
    // The DB's options and the filter of its keys follow what it holds and writes; a failure never fails the commit.
    try Option(handle).foreach { h => h.committed(numRows); keyIndex.committed(numRows, h) }
    catch { case NonFatal(e) => logWarning(s"Could not tune the RocksDB options of $storeName for its reads", e) }
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
  def invalidate(): Unit = held.forget()

  /**
   * Whether the commit of `version` takes a snapshot: when `minDeltas` versions passed since the last one, or Spark
   * asks for one (`forced`: the coordinator found the store's uploads lagging), but not while SST files still come
   * down: the commit would wait for them all (a lazily loaded store at 0.5 GB: 2-3 s a task after an executor loss).
   * Spark asks again at the store's next version while it lags; the first commit with the files local takes it.
   */
  def snapshotDue(version: Long, minDeltas: Int, forced: Boolean): Boolean =
    (forced || version - lastSnapshotVersion >= minDeltas) && !db.hydrating

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
    snapshots.offer(VersionFile(version, held.loaded), state.rows, state.recorded, dir)
    lastSnapshotVersion = version
  }

  /**
   * Maintenance: compacts the DB if a commit asked for it, so that the native filter drops the
   * expired rows of files no compaction would otherwise touch. Returns whether it compacted.
   */
  def compactIfWanted(): Boolean = dbLock.synchronized {
    val h = handle
    if (h == null || h.isClosed || h.hydrating || !upkeep.takeRequest()) false
    else {
      h.compactNow()
      upkeep.compacted()
      true
    }
  }

  override def close(): Unit = { closeDb(); held.forget(); LocalWorkDirs.release(workDir) }

  private def closeDb(): Unit = dbLock.synchronized {
    keyIndex.forget()
    if (handle != null) handle.close()
    handle = null
  }

  /** Opens a fresh DB from `snapshot` (None: empty); the copy then holds nothing trustworthy. */
  private def restore(snapshot: Option[VersionFile]): Unit = {
    closeDb()
    held.forget()
    val restored = dbDir.restore(snapshot)
    handle =
      try RocksDbHandle.open(dbDir.dir, storeName, settings, newFilter(), restored.served)
      catch {
        case e: TtlStoreException if snapshot.isDefined && RocksDbHandle.isCorruption(e) =>
          throw TtlStoreErrors.snapshotCorrupted(files.snapshotPath(snapshot.get).toString, snapshot.get.version,
            s"its files do not open as a RocksDB instance: ${e.getCause.getMessage}")
      }
    upkeep.reset()
    state.restored(restored.manifest.map(_.numRows).getOrElse(0L), restored.manifest.flatMap(_.ttl))
    sweepCursor = None; upgradeCursor = None
    lastSnapshotVersion = snapshot.fold(0L)(_.version)
  }

  private def replay(changelog: VersionFile): Unit = {
    val reader = changelogs.open(changelog)
    try {
      Replay.changelog(reader, handle, state.legacyRows > 0, keyIndex.added)
      state.replayed(reader.rowsAfter, reader.ttl)
    } finally reader.close()
  }
}
