package io.ttlstore

import java.io.File

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.execution.streaming.runtime.StreamExecution
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType

/**
 * ttlstore's state store provider: `spark.sql.streaming.stateStore.providerClass =
 * io.ttlstore.TtlStateStoreProvider`.
 *
 * A thin adapter over the parts: it checks Spark's lifecycle, loads the requested version into the
 * [[LocalStore]], opens [[TtlStore]]s on it, and runs background maintenance (snapshot upload,
 * retention). Spark creates one instance per store and executor, and one more on the driver with
 * the zero-argument constructor, without `init`, only to read `supportedCustomMetrics`: so the
 * constructor does nothing.
 */
class TtlStateStoreProvider extends FineGrainedReplayBridge with Logging {
  @volatile private var id: StateStoreId = _
  private var storeConf: StateStoreConf = _
  private var settings: TtlStoreSettings = _
  private var files: CheckpointFiles = _
  private var snapshots: SnapshotUploader = _
  private var local: LocalStore = _
  private var context: TtlStore.Context = _
  private var clock: Clock = SystemClock
  /** The key that set the time characteristic (named when a checkpoint disagrees with it). */
  private var timeKey: String = _

  private var lastLoadFigures = TtlStore.LoadFigures(0L, 0)
  private var maintenanceFigures = TtlStore.NoMaintenance

  override def init(
      stateStoreId: StateStoreId,
      keySchema: StructType,
      valueSchema: StructType,
      keyStateEncoderSpec: KeyStateEncoderSpec,
      useColumnFamilies: Boolean,
      storeConf: StateStoreConf,
      hadoopConf: Configuration,
      useMultipleValuesPerKey: Boolean,
      stateSchemaProvider: Option[StateSchemaProvider]): Unit = {
    if (useColumnFamilies) throw TtlStore.unsupported("column families")
    if (useMultipleValuesPerKey) throw TtlStore.unsupported("multiple values per key")
    this.id = stateStoreId
    this.storeConf = storeConf
    val scope = StoreScope(stateStoreId.operatorId, stateStoreId.storeName)
    this.settings = TtlStoreConfig.parse(storeConf.sqlConfs, scope)
    this.timeKey = ConfigScope.setBy(TtlStoreConfig.TimeCharacteristicKey, storeConf.sqlConfs, scope)
    StreamStreamJoin.checkTtl(settings, storeConf.sqlConfs, scope, stateStoreId.toString)
    val eventTimeColumn = settings.ttl.eventTimeColumn.map { path =>
      EventTimeColumn.resolve(path, keySchema, valueSchema,
        ConfigScope.setBy(TtlStoreConfig.EventTimeColumn, storeConf.sqlConfs, scope), stateStoreId.toString)
    }
    settings.testingClockMs.foreach(ms => clock = new ManualClock(ms))
    this.files = new CheckpointFiles(stateStoreId.storeCheckpointLocation(), hadoopConf)
    this.snapshots = new SnapshotUploader(files)
    val codec = KeyCodec(keyStateEncoderSpec, keySchema)
    val filterLoader = NativeFilter.wanted(settings, TtlStoreConfig.NativeFilterEnabled.key,
      stateStoreId.toString)
    val newFilter = () => filterLoader.map(_.create(settings.ttl.ttlMs, Long.MinValue).fold(
      problem => throw TtlStoreErrors.nativeFilterUnavailable(stateStoreId.toString,
        TtlStoreConfig.NativeFilterEnabled.key, problem), identity))
    val workDir = LocalWorkDirs.create(localRoot(settings))
    val legacyKey = LegacySource.keyEncoder(codec, keySchema.length)
    this.local = new LocalStore(stateStoreId.toString, workDir, settings, files, snapshots, newFilter,
      () => clock.millis(), legacyKey, storeConf.compressionCodec)
    val valueFieldCount = valueSchema.length
    this.context = new TtlStore.Context {
      override def storeId: StateStoreId = id
      override def local: LocalStore = TtlStateStoreProvider.this.local
      override def keyCodec: KeyCodec = codec
      override def valueFields: Int = valueFieldCount
      override def eventTime: Option[EventTimeColumn] = eventTimeColumn
      override def sweepRowsPerCommit: Int = settings.sweepRowsPerCommit
      override def compactExpiredShare: Double = settings.compactExpiredShare
      override def legacyRowTimestamp: LegacyRowTimestamp = settings.legacyRowTimestamp
      override def upgradeRowsPerCommit: Int = settings.upgradeRowsPerCommit
      override def leftUpgradeMode(version: Long): Unit =
        logInfo(s"$id left upgrade mode at version $version: every adopted row is upgraded")
      override def snapshotDue(version: Long): Boolean =
        local.snapshotDue(version, storeConf.minDeltasForSnapshot)
      override def newChangelog(version: Long): ChangelogWriter =
        new ChangelogWriter(files.createAtomic(files.changelogPath(version)),
          storeConf.compressionCodec)
      override def afterCommit(version: Long, forceSnapshot: Boolean): Unit =
        TtlStateStoreProvider.this.afterCommit(version, forceSnapshot)
      override def reportCommit(version: Long): Unit =
        if (storeConf.commitValidationEnabled) {
          StateStore.reportCommitToCoordinator(version, id, hadoopConf)
        }
      override def lastLoad: TtlStore.LoadFigures = lastLoadFigures
      override def takeMaintenanceFigures(): TtlStore.MaintenanceFigures =
        TtlStateStoreProvider.this.takeMaintenanceFigures()
    }
    logInfo(s"Initialized ttlstore for $stateStoreId in $workDir (checkpoint ${files.root}); " +
      s"${settings.ttl}; native filter ${if (filterLoader.isDefined) "on" else "off"}")
  }

  override def stateStoreId: StateStoreId = id

  override def getStore(
      version: Long,
      stateStoreCkptId: Option[String],
      forceSnapshotOnCommit: Boolean,
      loadEmpty: Boolean): StateStore = {
    load(version, stateStoreCkptId, loadEmpty)
    open(version, readOnly = false, forceSnapshotOnCommit, now())
  }

  override def getReadStore(version: Long, stateStoreCkptId: Option[String]): ReadStateStore = {
    load(version, stateStoreCkptId, loadEmpty = false)
    open(version, readOnly = true, forceSnapshot = false, now())
  }

  /**
   * A store version judging expiry at `now` with the query's TTL settings; the native filter
   * removes nothing it would show. A read-only store opened by Spark's state reader instead judges
   * with the TTL settings and time recorded with the version (see [[recordedView]]).
   */
  private def open(version: Long, readOnly: Boolean, forceSnapshot: Boolean, now: Long): TtlStore =
    synchronized {
      val reader = readOnly && readByStateReader
      recordedView.filter(_ => reader) match {
        case Some((policy, recordedNow)) =>
          readerStore(version, forceSnapshot, recordedNow, policy)
        case None if reader && RowTimes.get.isDefined =>
          readerStore(version, forceSnapshot, now, settings.ttl)
        case None =>
          local.pushTime(settings.ttl.ttlMs, now)
          new TtlStore(context, version, readOnly, forceSnapshot, now, settings.ttl)
      }
    }

  /**
   * A store for Spark's state reader judging at `now` with `policy`. Under a `ttlstore_state` read
   * ([[RowTimes]]) it tells each row's timestamp, and shows expired rows if the read asks for them.
   */
  private def readerStore(version: Long, forceSnapshot: Boolean, now: Long, policy: TtlPolicy)
      : TtlStore = RowTimes.get match {
    case Some(times) =>
      times.claim(policy.ttlMs, now)
      val shown = if (times.includeExpired) {
        policy.copy(visibility = StateVisibility.ReturnExpiredIfNotCleanedUp)
      } else policy
      new TtlStore(context, version, readOnly = true, forceSnapshot, now, shown, Some(times))
    case None =>
      new TtlStore(context, version, readOnly = true, forceSnapshot, now, policy)
  }

  /**
   * Spark's state reader runs as a batch job, so its tasks carry no streaming query id. It must see
   * each version as the query left it, whatever TTL the reading session sets.
   */
  private def readByStateReader: Boolean =
    Option(TaskContext.get()).exists(_.getLocalProperty(StreamExecution.QUERY_ID_KEY) == null)

  /**
   * The TTL settings recorded with the loaded version and the time it was written at: its
   * processing-time "now", or in event time its stream time. None for versions without a record.
   */
  private def recordedView: Option[(TtlPolicy, Long)] = for {
    record <- local.recorded
    policy <- record.policy
    now <- policy.timeCharacteristic match {
      case TimeCharacteristic.ProcessingTime => record.nowMs
      case TimeCharacteristic.EventTime => record.streamTimeMs.orElse(Some(Long.MinValue))
    }
  } yield (policy, now)

  /**
   * Spark's state reader with `snapshotStartBatchId`: version `endVersion` built from the snapshot
   * of `snapshotVersion` and the changelogs after it (even where a newer snapshot exists).
   */
  override def replayStateFromSnapshot(
      snapshotVersion: Long,
      endVersion: Long,
      readOnly: Boolean,
      startCheckpointId: Option[String],
      endCheckpointId: Option[String]): StateStore = {
    synchronized {
      refuseCheckpointIds(startCheckpointId.orElse(endCheckpointId))
      val start = System.nanoTime()
      val replayed =
        try local.loadFromSnapshot(snapshotVersion, endVersion)
        catch { case NonFatal(e) => throw TtlStoreErrors.loadFailed(id.toString, endVersion, e) }
      afterLoad(start, endVersion, replayed, loadEmpty = false)
    }
    open(endVersion, readOnly, forceSnapshot = false, now())
  }

  /** Spark's state reader with `readChangeFeed`: the changes of versions `startVersion` to `endVersion`. */
  override protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String])
      : ChangeFeed = {
    colFamilyName.filter(_ != StateStore.DEFAULT_COL_FAMILY_NAME).foreach { name =>
      throw TtlStore.unsupported(s"the column family '$name'")
    }
    new ChangeFeed(files, startVersion, endVersion, context.keyCodec, context.valueFields)
  }

  override protected def checkChangeFeedCheckpointId(id: Option[String]): Unit = refuseCheckpointIds(id)

  /** A read store of this provider becomes a write store in place: no second load, no lock. */
  override def upgradeReadStoreToWriteStore(
      readStore: ReadStateStore,
      version: Long,
      uniqueId: Option[String],
      forceSnapshotOnCommit: Boolean): StateStore = synchronized {
    if (readStore.version != version || local.version != version) {
      getStore(version, uniqueId, forceSnapshotOnCommit, loadEmpty = false)
    } else {
      // The same batch: the write store keeps the read store's "now".
      val now = readStore match { case t: TtlStore => t.now; case _ => this.now() }
      open(version, readOnly = false, forceSnapshotOnCommit, now)
    }
  }

  override def doMaintenance(): Unit = {
    doSnapshotMaintenance()
    doCleanupMaintenance()
    doCompactionMaintenance()
  }

  /** Compacts a store a commit found mostly expired, so that the native filter drops those rows. */
  private def doCompactionMaintenance(): Unit = if (local != null) {
    try {
      val start = System.nanoTime()
      if (local.compactIfWanted()) {
        logInfo(s"Compacted $id for its expired rows in ${(System.nanoTime() - start) / 1000000L} ms")
      }
    } catch {
      case NonFatal(e) => logWarning(s"Compacting $id failed; RocksDB's own compactions go on", e)
    }
  }

  /** Uploads the newest pending snapshot. Maintenance logs its failures and carries on. */
  override def doSnapshotMaintenance(): Unit = if (snapshots != null) {
    try {
      snapshots.uploadPending().foreach { u =>
        synchronized {
          maintenanceFigures = maintenanceFigures.copy(
            snapshots = maintenanceFigures.snapshots + 1,
            bytes = maintenanceFigures.bytes + u.bytes,
            latencyMs = maintenanceFigures.latencyMs + u.latencyMs)
        }
        logInfo(s"Uploaded the snapshot of version ${u.version} of $id " +
          s"(${u.bytes} bytes in ${u.latencyMs} ms)")
      }
    } catch {
      case NonFatal(e) => logWarning(s"Snapshot upload for $id failed; will retry later", e)
    }
  }

  /** Deletes the checkpoint files that no retained version needs. */
  override def doCleanupMaintenance(): Unit = if (files != null) {
    try CheckpointCleaner.clean(files, storeConf.minVersionsToRetain)
    catch {
      case NonFatal(e) => logWarning(s"Cleaning old checkpoint files of $id failed", e)
    }
  }

  override def close(): Unit = synchronized {
    if (local != null) {
      snapshots.discardPending()
      local.close()
      logInfo(s"Closed ttlstore for $id")
    }
  }

  override def supportedCustomMetrics: Seq[StateStoreCustomMetric] = StoreMetrics.all

  override def toString: String = s"TtlStateStoreProvider[$id]"

  /** For tests: the local working copy. */
  private[ttlstore] def localStore: LocalStore = local

  /** For tests: the checkpoint files of this store. */
  private[ttlstore] def checkpointFiles: CheckpointFiles = files

  /** For tests: the processing-time clock that stamps rows and judges expiry. */
  private[ttlstore] def setClock(c: Clock): Unit = clock = c

  /** "Now" for a version just loaded: the clock once, or in event time the recorded stream time. */
  private def now(): Long = settings.ttl.timeCharacteristic match {
    case TimeCharacteristic.ProcessingTime => clock.millis()
    case TimeCharacteristic.EventTime => local.streamTime
  }

  private def load(version: Long, checkpointId: Option[String], loadEmpty: Boolean): Unit =
    synchronized {
      refuseCheckpointIds(checkpointId)
      if (version < 0) throw TtlStoreErrors.versionNotFound(files.root.toString, version, None)
      val start = System.nanoTime()
      val replayed =
        try local.load(version, loadEmpty)
        catch { case NonFatal(e) => throw TtlStoreErrors.loadFailed(id.toString, version, e) }
      afterLoad(start, version, replayed, loadEmpty)
    }

  /** What every load does once the local DB holds `version`: checks, recount, figures, log. */
  private def afterLoad(start: Long, version: Long, replayed: Int, loadEmpty: Boolean): Unit = {
    checkTimeCharacteristic()
    if (local.recountIfTtlChanged(settings.ttl.ttlMs)) {
      logInfo(s"The TTL of $id changed: counted its rows again")
    }
    lastLoadFigures = TtlStore.LoadFigures((System.nanoTime() - start) / 1000000L, replayed)
    if (replayed > 0 || loadEmpty) {
      logInfo(s"Loaded version $version of $id (replayed $replayed changelogs in " +
        s"${lastLoadFigures.latencyMs} ms)")
    }
  }

  private def refuseCheckpointIds(checkpointId: Option[String]): Unit =
    if (checkpointId.isDefined) {
      throw TtlStoreErrors.unsupportedOperation("state store checkpoint ids",
        "set spark.sql.streaming.stateStore.checkpointFormatVersion to 1 (the default).")
    }

  /** Rows stamped in one time characteristic cannot be judged in the other. */
  private def checkTimeCharacteristic(): Unit =
    local.recorded.flatMap(_.timeCharacteristicValue).foreach { recorded =>
      if (recorded != settings.ttl.timeCharacteristic && local.numRows > 0) {
        throw TtlStoreErrors.timeCharacteristicChanged(id.toString, timeKey, recorded.name,
          settings.ttl.timeCharacteristic.name)
      }
    }

  private def afterCommit(version: Long, forceSnapshot: Boolean): Unit = synchronized {
    if (forceSnapshot || local.snapshotDue(version, storeConf.minDeltasForSnapshot)) {
      try local.snapshot(version)
      catch {
        case NonFatal(e) => logWarning(s"Could not take a local snapshot of version $version of $id; " +
          "the changelogs keep the state recoverable", e)
      }
    }
  }

  private def takeMaintenanceFigures(): TtlStore.MaintenanceFigures = synchronized {
    val figures = maintenanceFigures
    maintenanceFigures = TtlStore.NoMaintenance
    figures
  }

  private def localRoot(s: TtlStoreSettings): File = {
    val configured = s.localDir
      .orElse(sys.env.get("SPARK_LOCAL_DIRS"))
      .orElse(Option(SparkEnv.get).flatMap(_.conf.getOption("spark.local.dir")))
      .map(_.split(",").head.trim)
      .getOrElse(System.getProperty("java.io.tmpdir"))
    new File(configured)
  }
}
