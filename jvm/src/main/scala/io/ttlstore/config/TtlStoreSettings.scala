package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.ttl.{LegacyRowTimestamp, TimeCharacteristic, TtlPolicy}

/** The settings as parsed once at `init`; nothing else reads the raw configuration. */
final case class TtlStoreSettings(
    localDir: Option[String],
    memory: MemoryBudget,
    writeBufferSizeMb: Int,
    bloomFilterBitsPerKey: Int,
    sstCompression: String,
    knownKeysCapacity: Int,
    ttl: TtlPolicy = TtlPolicy.Off,
    allowTtlOnStreamStreamJoin: Boolean = false,
    sweepRowsPerCommit: Int = TtlStoreConfig.SweepRowsPerCommit.default,
    nativeFilter: NativeMode = TtlStoreConfig.NativeFilterEnabled.default,
    periodicCompactionMs: Option[Long] = None,
    compactExpiredShare: Double = TtlStoreConfig.CompactExpiredShare.default,
    legacyRowTimestamp: LegacyRowTimestamp = TtlStoreConfig.LegacyRowTimestampKey.default,
    upgradeRowsPerCommit: Int = TtlStoreConfig.UpgradeRowsPerCommit.default,
    /** What ttlstore's own tests inject ([[TestHooks]]); none outside them. */
    hooks: TestHooks = TestHooks.Off,
    indexAndFiltersInCache: Boolean = TtlStoreConfig.IndexAndFiltersInCache.default,
    /** Spark's autoSnapshotRepair.* settings ([[SparkStateSettings]]). */
    snapshotRepair: SnapshotRepair = SnapshotRepair.SparkDefault,
    /** Spark's maxVersionsToDeletePerMaintenance; None: no limit. */
    maxVersionsToDelete: Option[Int] = None,
    /** SST files an executor downloads at once ([[io.ttlstore.checkpoint.SstDownloads]]). */
    downloadThreads: Int = TtlStoreConfig.DownloadThreads.default,
    lazyLoad: NativeMode = TtlStoreConfig.LazyLoadEnabled.default,
    lazyReadTimeoutMs: Long = TtlStoreConfig.LazyReadTimeout.default,
    remoteCacheMb: Long = TtlStoreConfig.RemoteCacheMb.default,
    readAheadThreads: Int = TtlStoreConfig.ReadAheadThreads.default) {

  /** RocksDB's periodic_compaction_seconds for the timestamped family (see the key's doc). */
  def periodicCompactionSeconds: Long = periodicCompactionMs match {
    case Some(ms) => math.max(ms / 1000, if (ms > 0) 1L else 0L)
    case None => TtlStoreSettings.derivedPeriodicCompactionSeconds(ttl.ttlMs)
  }
}

object TtlStoreSettings {
  import TtlStoreConfig._

  private val Hour = 3600L
  private val ThirtyDays = 30L * 24 * Hour

  /** Unset periodic compaction: twice the TTL, within [1 hour, 30 days] (0 with TTL off). */
  def derivedPeriodicCompactionSeconds(ttlMs: Long): Long =
    if (ttlMs <= 0) 0L
    else math.min(math.max(ttlMs / 1000 * 2, Hour), ThirtyDays)

  /**
   * Parses the explicitly set confs for one store, of executors with `overhead` (the memory budget's default
   * follows it); unknown keys under our prefix are errors.
   */
  def parse(
      sqlConfs: Map[String, String],
      scope: StoreScope = StoreScope.Default,
      overhead: ExecutorOverhead = ExecutorOverhead.Local): TtlStoreSettings = {
    ConfigScope.checkKeys(sqlConfs)
    TtlStoreSettings(
      localDir = Some(LocalDir.readFrom(sqlConfs)).filter(_.nonEmpty),
      memory = MemoryBudget.parse(sqlConfs, overhead),
      writeBufferSizeMb = WriteBufferSizeMb.readFrom(sqlConfs),
      bloomFilterBitsPerKey = BloomFilterBitsPerKey.readFrom(sqlConfs),
      sstCompression = SstCompression.readFrom(sqlConfs),
      knownKeysCapacity = KnownKeysCapacity.readFrom(sqlConfs),
      indexAndFiltersInCache = IndexAndFiltersInCache.readFrom(sqlConfs),
      ttl = ttlPolicy(sqlConfs, scope),
      allowTtlOnStreamStreamJoin = AllowTtlOnStreamStreamJoin.resolve(sqlConfs, scope).value,
      sweepRowsPerCommit = SweepRowsPerCommit.readFrom(sqlConfs),
      nativeFilter = NativeFilterEnabled.readFrom(sqlConfs),
      periodicCompactionMs = PeriodicCompaction.readFrom(sqlConfs),
      compactExpiredShare = CompactExpiredShare.readFrom(sqlConfs),
      legacyRowTimestamp = LegacyRowTimestampKey.readFrom(sqlConfs),
      upgradeRowsPerCommit = UpgradeRowsPerCommit.readFrom(sqlConfs),
      hooks = TestHooks.from(sqlConfs),
      snapshotRepair = SparkStateSettings.snapshotRepair(sqlConfs),
      maxVersionsToDelete = SparkStateSettings.maxVersionsToDelete(sqlConfs),
      downloadThreads = DownloadThreads.readFrom(sqlConfs),
      lazyLoad = LazyLoadEnabled.readFrom(sqlConfs),
      lazyReadTimeoutMs = LazyReadTimeout.readFrom(sqlConfs),
      remoteCacheMb = RemoteCacheMb.readFrom(sqlConfs),
      readAheadThreads = ReadAheadThreads.readFrom(sqlConfs))
  }

  /** The TTL policy of one store; event time without a column fails naming the keys. */
  def ttlPolicy(sqlConfs: Map[String, String], scope: StoreScope): TtlPolicy = {
    val time = TimeCharacteristicKey.resolve(sqlConfs, scope)
    val column = EventTimeColumnKey.resolve(sqlConfs, scope)
    if (time.value == TimeCharacteristic.EventTime && column.value.isEmpty) {
      throw TtlStoreErrors.eventTimeColumnMissing(time.setBy.getOrElse(TimeCharacteristicKey.key),
        EventTimeColumnKey.candidates(scope).last)
    }
    TtlPolicy(
      ttlMs = Ttl.resolve(sqlConfs, scope).value,
      updateType = UpdateTypeKey.resolve(sqlConfs, scope).value,
      visibility = StateVisibilityKey.resolve(sqlConfs, scope).value,
      timeCharacteristic = time.value,
      eventTimeColumn = column.value.filter(_ => time.value == TimeCharacteristic.EventTime))
  }
}
