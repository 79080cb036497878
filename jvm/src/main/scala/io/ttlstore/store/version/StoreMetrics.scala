package io.ttlstore.store.version

import org.apache.spark.sql.execution.streaming
  .state.{StateStoreCustomMetric, StateStoreCustomSizeMetric, StateStoreCustomSumMetric, StateStoreCustomTimingMetric}

import io.ttlstore.spark.StoreGauge
import io.ttlstore.store.local.StoreFootprint
import io.ttlstore.store.rocksdb.MemoryFigures

/**
 * The custom metrics ttlstore reports in `StreamingQueryProgress.stateOperators[].customMetrics`.
 * Spark sums each over the partitions of an operator.
 */
object StoreMetrics {
  val CommitLatencyMs = StateStoreCustomTimingMetric(
    "ttlstoreCommitLatencyMs", "ttlstore: time to commit a version (ms)")
  val ChangelogBytes = StateStoreCustomSumMetric(
    "ttlstoreChangelogBytes", "ttlstore: changelog bytes written")
  val LoadLatencyMs = StateStoreCustomTimingMetric(
    "ttlstoreLoadLatencyMs", "ttlstore: time to load the state version (ms)")
  val ChangelogsReplayed = StateStoreCustomSumMetric(
    "ttlstoreChangelogsReplayed", "ttlstore: changelog files replayed while loading")
  val LoadFilesFetched = StateStoreCustomSumMetric(
    "ttlstoreLoadFilesFetched", "ttlstore: SST files a load downloaded from the checkpoint")
  val LoadBytesFetched = StateStoreCustomSumMetric(
    "ttlstoreLoadBytesFetched", "ttlstore: SST bytes a load downloaded from the checkpoint")
  val LoadFilesReused = StateStoreCustomSumMetric(
    "ttlstoreLoadFilesReused", "ttlstore: SST files a load took from the local copy instead of downloading them")
  val LoadCheckpointReads = StateStoreCustomSumMetric(
    "ttlstoreLoadCheckpointReads",
    "ttlstore: reads of SST files not local that the checkpoint served during a load (a lazy or remote DB's open)")
  val SnapshotsRepaired = StateStoreCustomSumMetric(
    "ttlstoreSnapshotsRepaired",
    "ttlstore: loads built from an older snapshot because the newest failed to load (autoSnapshotRepair)")
  val SnapshotsUploaded = StateStoreCustomSumMetric(
    "ttlstoreSnapshotsUploaded", "ttlstore: snapshots uploaded by maintenance")
  val SnapshotUploadLatencyMs = StateStoreCustomTimingMetric(
    "ttlstoreSnapshotUploadLatencyMs", "ttlstore: time to upload snapshots (ms)")
  val SnapshotBytesUploaded = StateStoreCustomSumMetric(
    "ttlstoreSnapshotBytesUploaded", "ttlstore: snapshot bytes uploaded (new SSTs and metadata)")
  val CheckpointReads = StateStoreCustomSumMetric(
    "ttlstoreCheckpointReads",
    "ttlstore: reads of SST files not local that the checkpoint served (lazy and remote mode)")
  val CheckpointBytesRead = StateStoreCustomSumMetric(
    "ttlstoreCheckpointBytesRead", "ttlstore: bytes of SST files not local read from the checkpoint")
  val SstBytes = StateStoreCustomSizeMetric(
    "ttlstoreSstBytes", "ttlstore: size of the live SST files")
  val LocalBytes = StateStoreCustomSizeMetric(StoreGauge.LocalBytes.name,
    "ttlstore: bytes of the stores' DBs on the executors' disks")
  val FilesNotLocal = StateStoreCustomSumMetric(StoreGauge.FilesNotLocal.name,
    "ttlstore: SST files the stores' DBs still read from the checkpoint (lazy load, remote mode)")

  val MemoryBudgetBytes = StateStoreCustomSizeMetric("ttlstoreMemoryBudgetBytes",
    "ttlstore: the executors' RocksDB memory budget (maxMemoryUsageMB, set or derived), split between their stores")
  val MemoryCacheBytes = StateStoreCustomSizeMetric("ttlstoreMemoryCacheBytes",
    "ttlstore: what the executors' block caches hold (blocks, and memtables with bounded memory), split between stores")
  val MemoryMemtableBytes = StateStoreCustomSizeMetric(
    "ttlstoreMemoryMemtableBytes", "ttlstore: the stores' memtables")
  val MemoryResidentBytes = StateStoreCustomSizeMetric("ttlstoreMemoryResidentBytes",
    "ttlstore: the executors' resident memory (RSS, which a container limit holds), split between their stores")

  val ExpiredRemovedOnAccess = StateStoreCustomSumMetric(
    "ttlstoreExpiredRemovedOnAccess", "ttlstore: expired rows removed when a read met them")
  val ExpiredRemovedBySweep = StateStoreCustomSumMetric(
    "ttlstoreExpiredRemovedBySweep", "ttlstore: expired rows removed by the incremental sweep")
  val ExpiredRemovedBeforeSnapshot = StateStoreCustomSumMetric(
    "ttlstoreExpiredRemovedBeforeSnapshot",
    "ttlstore: expired rows removed so that a snapshot holds none")
  val SweepRowsExamined = StateStoreCustomSumMetric(
    "ttlstoreSweepRowsExamined", "ttlstore: rows the sweep examined")
  val ExpiredRowsStored = StateStoreCustomSumMetric(
    "ttlstoreExpiredRowsStored",
    "ttlstore: rows expired but still stored (with the native filter: an estimate of those no compaction dropped yet)")
  val RowsExpired = StateStoreCustomSumMetric(
    "ttlstoreRowsExpired",
    "ttlstore: rows that left numRowsTotal because they expired (every path: read, sweep, snapshot, filter)")
  val ExpiredRemovedByFilter = StateStoreCustomSumMetric(
    "ttlstoreExpiredRemovedByFilter",
    "ttlstore: expired values the native compaction filter dropped (older versions of a key included)")
  val CompactionsRequested = StateStoreCustomSumMetric(
    "ttlstoreCompactionsRequested",
    "ttlstore: compactions requested because many rows had expired")

  val LegacyRowsRemaining = StateStoreCustomSumMetric(
    "ttlstoreLegacyRowsRemaining",
    "ttlstore: rows of an adopted checkpoint not yet upgraded (the store is in upgrade mode while > 0)")
  val RowsUpgradedOnAccess = StateStoreCustomSumMetric(
    "ttlstoreRowsUpgradedOnAccess", "ttlstore: legacy rows upgraded when a read or write met them")
  val RowsUpgradedByCommit = StateStoreCustomSumMetric(
    "ttlstoreRowsUpgradedByCommit", "ttlstore: legacy rows upgraded by the bounded upgrade at commit")

  val ReadAheadAsked = StateStoreCustomSumMetric(
    "ttlstoreReadAheadAsked", "ttlstore: state keys the read-ahead asked the store to bring in before the operator")
  val ReadAheadCached = StateStoreCustomSumMetric(
    "ttlstoreReadAheadCached",
    "ttlstore: keys read ahead whose blocks were cached already, or that the store surely does not hold")
  val ReadAheadBrought = StateStoreCustomSumMetric(
    "ttlstoreReadAheadBrought", "ttlstore: keys read ahead whose blocks were read (from the checkpoint or the disk)")
  val ReadAheadFailed = StateStoreCustomSumMetric(
    "ttlstoreReadAheadFailed", "ttlstore: reads ahead that failed (dropped: the operator's own read decides)")
  val ReadAheadOperatorReadMs = StateStoreCustomTimingMetric(
    "ttlstoreReadAheadOperatorReadMs",
    "ttlstore: time the operator's own point reads still took while reads ran ahead (ms)")

  val all: Seq[StateStoreCustomMetric] = Seq(CommitLatencyMs, ChangelogBytes, LoadLatencyMs,
    ChangelogsReplayed, LoadFilesFetched, LoadBytesFetched, LoadFilesReused, LoadCheckpointReads, SnapshotsRepaired,
    SnapshotsUploaded,
    SnapshotUploadLatencyMs, SnapshotBytesUploaded, CheckpointReads, CheckpointBytesRead, SstBytes, LocalBytes,
    FilesNotLocal, MemoryBudgetBytes, MemoryCacheBytes, MemoryMemtableBytes, MemoryResidentBytes,
    ExpiredRemovedOnAccess, ExpiredRemovedBySweep, ExpiredRemovedBeforeSnapshot, SweepRowsExamined,
    ExpiredRowsStored, RowsExpired, ExpiredRemovedByFilter, CompactionsRequested, LegacyRowsRemaining,
    RowsUpgradedOnAccess, RowsUpgradedByCommit, ReadAheadAsked, ReadAheadCached, ReadAheadBrought, ReadAheadFailed,
    ReadAheadOperatorReadMs)

  /** The custom metrics of one store version. */
  def custom(
      commit: CommitFigures,
      load: LoadFigures,
      sstBytes: Long,
      expiry: ExpiryFigures,
      expiredStored: Long,
      legacyRows: Long,
      upgrades: UpgradeFigures,
      readAhead: ReadAheadFigures,
      footprint: StoreFootprint,
      memory: MemoryFigures): Map[StateStoreCustomMetric, Long] = Map(
    CommitLatencyMs -> commit.latencyMs,
    ChangelogBytes -> commit.changelogBytes,
    LoadLatencyMs -> load.latencyMs,
    ChangelogsReplayed -> load.changelogsReplayed.toLong,
    LoadFilesFetched -> load.fetched.files.toLong,
    LoadBytesFetched -> load.fetched.bytes,
    LoadFilesReused -> load.fetched.reused.toLong,
    LoadCheckpointReads -> load.checkpointReads.reads,
    SnapshotsRepaired -> load.snapshotsRepaired.toLong,
    SnapshotsUploaded -> commit.uploads.count,
    SnapshotUploadLatencyMs -> commit.uploads.latencyMs,
    SnapshotBytesUploaded -> commit.uploads.bytes,
    CheckpointReads -> commit.checkpointReads.reads,
    CheckpointBytesRead -> commit.checkpointReads.bytes,
    SstBytes -> sstBytes,
    LocalBytes -> footprint.localBytes,
    FilesNotLocal -> footprint.filesNotLocal.toLong,
    MemoryBudgetBytes -> memory.budgetBytes,
    MemoryCacheBytes -> memory.cacheBytes,
    MemoryMemtableBytes -> memory.memtableBytes,
    MemoryResidentBytes -> memory.residentBytes,
    ExpiredRemovedOnAccess -> expiry.onAccess,
    ExpiredRemovedBySweep -> expiry.bySweep,
    ExpiredRemovedBeforeSnapshot -> expiry.beforeSnapshot,
    SweepRowsExamined -> expiry.examined,
    ExpiredRemovedByFilter -> expiry.byFilter,
    CompactionsRequested -> expiry.compactionsRequested,
    ExpiredRowsStored -> expiredStored,
    RowsExpired -> expiry.rowsExpired,
    LegacyRowsRemaining -> legacyRows,
    RowsUpgradedOnAccess -> upgrades.onAccess,
    RowsUpgradedByCommit -> upgrades.byCommit,
    ReadAheadAsked -> readAhead.asked,
    ReadAheadCached -> readAhead.cached,
    ReadAheadBrought -> readAhead.brought,
    ReadAheadFailed -> readAhead.failed,
    ReadAheadOperatorReadMs -> readAhead.operatorReadMs)
}
