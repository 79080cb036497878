package io.ttlstore.store.version

import io.ttlstore.checkpoint.{CheckpointRangedReads, SnapshotUploader, SstDownloads}
import io.ttlstore.store.rocksdb.RocksDbHandle

// What a store version reports in its metrics (StoreMetrics.custom): its load, its commit, the expired
// rows it removed and the legacy rows it upgraded. `Zero` is a version that did none of it yet.

/**
 * How long the load of `version` took, how many changelogs it replayed, whether it was built
 * around a snapshot that failed to load (autoSnapshotRepair), the SST files it fetched, and the reads of SST
 * files not local that the checkpoint answered during it (a DB opened lazily or in remote mode reads each file's
 * last blocks at its open).
 */
final case class LoadFigures(latencyMs: Long, changelogsReplayed: Int, snapshotsRepaired: Int = 0, version: Long = -1L,
    fetched: SstDownloads.Fetched = SstDownloads.Fetched.Zero,
    checkpointReads: CheckpointRangedReads.Served = CheckpointRangedReads.Served.Zero)

object LoadFigures {
  val Zero: LoadFigures = LoadFigures(0L, 0)

  /**
   * What a version reports after `load`: Spark may ask for the version just loaded again (a read
   * store, then a write store), and that finds it built: the figures stay those of the load that built it.
   */
  def after(previous: LoadFigures, load: LoadFigures): LoadFigures =
    if (load.changelogsReplayed == 0 && load.snapshotsRepaired == 0 && load.fetched == SstDownloads.Fetched.Zero &&
      load.checkpointReads == CheckpointRangedReads.Served.Zero && load.version == previous.version) previous
    else load
}

/** What the checkpoint served `db` (compared by identity; null: none) since it opened, taken before and after a load. */
final case class DbReads(db: RocksDbHandle, served: CheckpointRangedReads.Served) {

  /** The reads since `before`: all of these where the DB is another one, opened since. */
  def since(before: DbReads): CheckpointRangedReads.Served = if (before.db eq db) served - before.served else served
}

object DbReads {
  def of(db: RocksDbHandle): DbReads =
    DbReads(db, Option(db).fold(CheckpointRangedReads.Served.Zero)(_.checkpointReads))
}

/**
 * What a commit did, the snapshot uploads maintenance finished since the previous commit, and the reads of SST files
 * not local that the checkpoint answered while the version was open (lazy and remote mode).
 */
final case class CommitFigures(changelogBytes: Long, latencyMs: Long, uploads: SnapshotUploader.Upload,
    checkpointReads: CheckpointRangedReads.Served = CheckpointRangedReads.Served.Zero)

object CommitFigures {
  val Zero: CommitFigures = CommitFigures(0L, 0L, SnapshotUploader.Upload.Zero)
}

/** Expired rows one version removed, by path, and rows the sweep examined. */
final class ExpiryFigures {
  var onAccess = 0L
  var bySweep = 0L
  var beforeSnapshot = 0L
  var examined = 0L
  var byFilter = 0L

  /** Rows uncounted at commit because they are certainly expired (native filter stores). */
  var uncounted = 0L

  /** Of `onAccess`, the rows an earlier commit had already uncounted (native filter stores). */
  var onAccessUncounted = 0L
  var compactionsRequested = 0L

  /** Rows that left numRowsTotal because they expired, by every path, each once. */
  def rowsExpired: Long = onAccess - onAccessUncounted + bySweep + beforeSnapshot + uncounted
}

/** Legacy rows one version upgraded, by path. */
final class UpgradeFigures {
  var onAccess = 0L
  var byCommit = 0L
}

/**
 * What one version's reads ahead did: keys the read-ahead node asked, those whose blocks were cached already (or
 * that were surely absent), those read, those whose read failed, and the time the operator's own reads still took.
 */
final case class ReadAheadFigures(asked: Long, cached: Long, brought: Long, failed: Long, operatorReadMs: Long)

object ReadAheadFigures {
  val Zero: ReadAheadFigures = ReadAheadFigures(0L, 0L, 0L, 0L, 0L)
}
