package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotUploader, VersionFile}
import io.ttlstore.config.{ConfigKey, ConfigScope, ExecutorOverhead, IgnoredSettings, StoreScope, StreamStreamJoin, TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.errors.{LineErrors, StorageErrors, TtlStoreErrors}
import io.ttlstore.reader.ChangeFeed
import io.ttlstore.spark.{CheckpointFormatV2, InstanceMetrics, LineCapabilities, SparkClasses}
import io.ttlstore.ttl.{Clock, EventTimeColumn, ManualClock, SystemClock}
import io.ttlstore.store.codec.{KeyCodec, LegacyKeys}
import io.ttlstore.store.local.{CheckpointFormat, LineageFiles, LocalCopy, SnapshotUploadReport, StoreMaintenance}
import io.ttlstore.store.nativelib.NativeFilter
import io.ttlstore.store.rocksdb.LocalWorkDirs
import io.ttlstore.store.version.{DbReads, LoadFigures, StateReaderView, StoreMetrics, StoreVersion, VersionSettings, VersionTime}

/**
 * ttlstore's state store provider: `spark.sql.streaming.stateStore.providerClass =
 * io.ttlstore.TtlStateStoreProvider`.
 *
 * A thin adapter over the parts: it checks Spark's lifecycle, loads the requested version into the
 * [[LocalCopy]], opens [[StoreVersion]]s on it with everything they need ([[VersionSettings]]), and runs
 * background maintenance (snapshot upload, retention, compaction). Spark creates one instance per
 * store and executor, and one more on the driver with the zero-argument constructor, without
 * `init`, only to read `supportedCustomMetrics`: so the constructor only checks that Spark is of
 * this jar's line. Each line's [[TtlProviderAdapter]] offers Spark 4.3's members in its terms.
 *
 * @param testClock a JVM test's processing-time clock, judging instead of the batch's timestamp
 *   ([[VersionTime]]); Spark calls the constructor without one
 */
class TtlStateStoreProvider private[ttlstore] (testClock: Option[Clock]) extends TtlProviderAdapter
  with InstanceMetrics.Reporting with Logging {
  def this() = this(None)

  @volatile private var id: StateStoreId = _
  private var storeConf: StateStoreConf = _
  private var settings: TtlStoreSettings = _
  private var files: CheckpointFiles = _
  private var snapshots: SnapshotUploader = _
  private var maintenance: StoreMaintenance = _
  private var local: LocalCopy = _

  /** What every version of this store is told; each open fills in its version, time and policy. */
  private var template: VersionSettings = _
  private var clock: Clock = SystemClock

  /** The key that set the time characteristic (named when a checkpoint disagrees with it). */
  private var timeKey: String = _
  private var lastLoad = LoadFigures.Zero

  private var time: VersionTime = _

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
    if (useColumnFamilies)
      throw TtlStoreErrors.unsupportedByClassicStores("column families", ConfigKey.SparkProviderKey)
    if (useMultipleValuesPerKey)
      throw TtlStoreErrors.unsupportedByClassicStores("multiple values per key", ConfigKey.SparkProviderKey)
    if (!LineCapabilities.checkpointFormatV2 && storeConf.sqlConfs.get(ConfigKey.SparkCheckpointFormatKey).contains(
        "2")) {
      throw LineErrors.checkpointFormatV2NotInSpark(ConfigKey.SparkCheckpointFormatKey, org.apache.spark.SPARK_VERSION)
    }
    this.id = stateStoreId
    this.storeConf = storeConf
    val confs = storeConf.sqlConfs
    val scope = StoreScope(stateStoreId.operatorId, stateStoreId.storeName)
    val env = Option(SparkEnv.get) // none in a tool or a unit test: local mode's memory
    this.settings = TtlStoreSettings.parse(confs, scope,
      ExecutorOverhead.of(env.fold(Map.empty[String, String])(
          _.conf.getAll.toMap), LineCapabilities.minMemoryOverhead, onExecutor = env.exists(_.executorId != "driver")))
    IgnoredSettings.warnOnce(confs)
    this.timeKey = ConfigScope.setBy(TtlStoreConfig.TimeCharacteristicKey, confs, scope)
    StreamStreamJoin.checkTtl(settings, confs, scope, stateStoreId.toString)
    val eventTime = settings.ttl.eventTimeColumn.map { path =>
      EventTimeColumn.resolve(path, keySchema, valueSchema,
        ConfigScope.setBy(TtlStoreConfig.EventTimeColumnKey, confs, scope), stateStoreId.toString)
    }
    val fixedClock = testClock.orElse(settings.hooks.clockMs.map(new ManualClock(_)))
    this.clock = fixedClock.getOrElse(SystemClock)
    this.files = new CheckpointFiles(stateStoreId.storeCheckpointLocation(), hadoopConf)
    this.snapshots = new SnapshotUploader(files)
    val codec = KeyCodec(keyStateEncoderSpec, keySchema)
    val filterLoader = NativeFilter.wanted(settings, TtlStoreConfig.NativeFilterEnabled.key, stateStoreId.toString)
    val newFilter = () =>
      filterLoader.map(_.create(settings.ttl.ttlMs, Long.MinValue).fold(
          problem =>
            throw TtlStoreErrors.nativeFilterUnavailable(stateStoreId.toString,
              TtlStoreConfig.NativeFilterEnabled.key, problem), identity))
    val format = CheckpointFormat.forProvider(CheckpointFormatV2.enabled(storeConf), readByStateReader,
      files.listing().hasCheckpointIds)
    val workDir = LocalWorkDirs.create(LocalWorkDirs.root(settings.localDir))
    this.local = new LocalCopy(stateStoreId.toString, workDir, settings, format, files, snapshots, newFilter,
      clock, LegacyKeys.encoder(codec, keySchema), storeConf.compressionCodec)
    this.maintenance = new StoreMaintenance(stateStoreId.toString, files, snapshots, local,
      SnapshotUploadReport(stateStoreId, storeConf, hadoopConf), storeConf.minVersionsToRetain,
      settings.maxVersionsToDelete)
    this.time = new VersionTime(local, settings.ttl.timeCharacteristic, fixedClock.isDefined,
      stateStoreId.checkpointRootLocation, hadoopConf, () => clock)
    this.template = VersionSettings(stateStoreId, version = 0L, readOnly = false, now = 0L, settings.ttl,
      codec, valueSchema.length, eventTime, settings.sweepRowsPerCommit, settings.compactExpiredShare,
      settings.upgradeRowsPerCommit, settings.legacyRowTimestamp, snapshotOnCommit = false,
      storeConf.compressionCodec, Some(hadoopConf).filter(_ => CoordinatorBridge.validatesCommits(storeConf)), lastLoad,
      loadedCheckpointId = None, checkpointId = None, readAheadThreads = settings.readAheadThreads,
      readAheadKey = settings.hooks.readAheadKey)
    logInfo(s"Initialized ttlstore for $stateStoreId in $workDir (checkpoint ${files.root}); " +
      s"${settings.ttl}; native filter ${if (filterLoader.isDefined) "on" else "off"}; $format; ${local.locality}")
  }

  override def stateStoreId: StateStoreId = id

  override def getStore(
      version: Long,
      stateStoreCkptId: Option[String],
      forceSnapshotOnCommit: Boolean,
      loadEmpty: Boolean): StateStore = {
    load(version, stateStoreCkptId, loadEmpty)
    open(version, readOnly = false, forceSnapshotOnCommit, now(version))
  }

  override def getReadStore(version: Long, stateStoreCkptId: Option[String]): ReadStateStore = {
    load(version, stateStoreCkptId, loadEmpty = false)
    open(version, readOnly = true, forceSnapshot = false, now(version))
  }

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
      val now = readStore match { case t: StoreVersion => t.now; case _ => this.now(version) }
      open(version, readOnly = false, forceSnapshotOnCommit, now)
    }
  }

  /**
   * A store version judging expiry at `now` with the query's TTL settings; the native filter
   * removes nothing it would show. A read-only store opened by Spark's state reader instead judges
   * with what [[StateReaderView]] says.
   */
  private def open(version: Long, readOnly: Boolean, forceSnapshot: Boolean, now: Long): StoreVersion =
    synchronized {
      val base = template.copy(version = version, readOnly = readOnly, now = now, lastLoad = lastLoad,
        judgedByWatermark = time.watermarkAt(version).contains(now),
        snapshotOnCommit = local.snapshotDue(version + 1, storeConf.minDeltasForSnapshot, forceSnapshot),
        loadedCheckpointId = local.loadedCheckpointId, checkpointId = local.sessionCheckpointId)
      val forReader = if (readOnly && readByStateReader) StateReaderView.of(base, local.recorded) else None
      if (forReader.isEmpty) local.pushTime(settings.ttl.ttlMs, now)
      new StoreVersion(forReader.getOrElse(base), local)
    }

  /**
   * Spark's state reader runs as a batch job, so its tasks carry no streaming query id. It must see
   * each version as the query left it, whatever TTL the reading session sets.
   */
  private def readByStateReader: Boolean =
    Option(TaskContext.get()).exists(_.getLocalProperty(SparkClasses.QueryIdKey) == null)

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
      loading(endVersion, loadEmpty = false)(
        local.loadFromSnapshot(VersionFile(snapshotVersion, startCheckpointId),
          VersionFile(endVersion, endCheckpointId)))
    }
    open(endVersion, readOnly, forceSnapshot = false, now(endVersion))
  }

  /** Spark's state reader with `readChangeFeed`: the changes of versions `startVersion` to `endVersion`. */
  override protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String],
      endCheckpointId: Option[String]): ChangeFeed = {
    colFamilyName.filter(_ != StoreVersion.DefaultColumnFamily).foreach { name =>
      throw TtlStoreErrors.unsupportedByClassicStores(s"the column family '$name'", ConfigKey.SparkProviderKey)
    }
    val versions = new LineageFiles(files).feedVersions(startVersion, endVersion, endCheckpointId)
    new ChangeFeed(files, versions, template.keyCodec, template.valueFields)
  }

  /**
   * Everything maintenance does. Spark 4.3's periodic maintenance never calls this: it calls
   * [[doSnapshotMaintenance]] and [[doCleanupMaintenance]] separately (one `MaintenanceOpType`
   * each, `StateStore$.submitMaintenanceWorkForProvider`), and calls `doMaintenance()` only when it
   * unloads a provider (`StateStore$.doMaintenanceAndUnload`). So the work lives in those two, and
   * Spark 4.0 to 4.2, whose maintenance calls only this, get both.
   */
  override def doMaintenance(): Unit = {
    doSnapshotMaintenance()
    doCleanupMaintenance()
  }

  override def doSnapshotMaintenance(): Unit = if (maintenance != null) maintenance.snapshot()

  override def doCleanupMaintenance(): Unit = if (maintenance != null) maintenance.cleanup()

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
  private[ttlstore] def localStore: LocalCopy = local

  /** For tests: the checkpoint files of this store. */
  private[ttlstore] def checkpointFiles: CheckpointFiles = files

  /** "Now" for version `version` just loaded (see [[VersionTime]]). */
  private def now(version: Long): Long = time.at(version)

  private def load(version: Long, checkpointId: Option[String], loadEmpty: Boolean): Unit =
    synchronized {
      if (version < 0) throw TtlStoreErrors.versionNotFound(files.root.toString, version, None)
      loading(version, loadEmpty)(local.load(VersionFile(version, checkpointId), loadEmpty))
    }

  /**
   * Runs a load that makes the local DB hold `version` (returning the changelogs it replayed), then
   * what every load does: checks, recount, figures, log.
   */
  private def loading(version: Long, loadEmpty: Boolean)(replay: => Int): Unit = {
    val start = System.nanoTime()
    val before = DbReads.of(local.db)
    val replayed =
      try replay
      catch {
        case e: OutOfMemoryError => throw TtlStoreErrors.notEnoughMemoryToLoad(id.toString, version, e)
        case NonFatal(e) => throw StorageErrors.loadFailed(id.toString, version, files.root.toString, e)
      }
    // Spark's state reader judges with what the version recorded, whatever the reading session sets.
    if (!readByStateReader) checkTimeCharacteristic()
    if (local.recountIfTtlChanged(settings.ttl.ttlMs)) {
      logInfo(s"The TTL of $id changed: counted its rows again")
    }
    lastLoad = LoadFigures.after(lastLoad,
      LoadFigures((System.nanoTime() - start) / 1000000L, replayed, local.takeSnapshotsRepaired(), version,
        local.takeFetched(), DbReads.of(local.db).since(before)))
    if (replayed > 0 || loadEmpty) {
      logInfo(s"Loaded version $version of $id (replayed $replayed changelogs in ${lastLoad.latencyMs} ms)")
    }
  }

  /** Rows stamped in one time characteristic cannot be judged in the other. */
  private def checkTimeCharacteristic(): Unit =
    local.recorded.flatMap(_.timeCharacteristicValue).foreach { recorded =>
      if (recorded != settings.ttl.timeCharacteristic && local.numRows > 0) {
        throw TtlStoreErrors.timeCharacteristicChanged(id.toString, timeKey, recorded.name,
          settings.ttl.timeCharacteristic.name)
      }
    }

}
