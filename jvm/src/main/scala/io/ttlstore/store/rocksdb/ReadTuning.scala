package io.ttlstore.store.rocksdb

/**
 * Which of RocksDB's mutable options a store's reads want, decided at each commit from what the
 * store holds and what the commit wrote (pure: no clock, no I/O; [[RocksDbHandle.committed]] applies
 * it to its DB, and a new DB starts from RocksDB's defaults with a new one).
 *
 *  - **A memtable filter once the store is large.** A read first searches the memtables; where
 *    a batch writes (aggregation, flatMapGroupsWithState) they hold up to a snapshot period of
 *    writes, and a key that is not there costs a skip-list search of ~20 cache misses. A whole-key
 *    Bloom filter answers most of those, but costs a fixed share of the memtable whatever the store
 *    holds, so it is turned on only for stores of at least [[ReadTuning.MemtableFilterMinRows]].
 *  - **L0 kept short while a store only reads.** Every read checks the filter of each L0 file
 *    before it reaches the level where the key is. A store that writes nothing (a steady
 *    deduplication) keeps the fill's last L0 files for ever. After [[ReadTuning.ReadOnlyCommits]]
 *    commits in a row that wrote nothing, with two L0 files or more, the L0 compaction trigger goes
 *    down to one file, so RocksDB's own background threads merge L0 into the base level once; the
 *    next commit that writes restores the trigger. Only commits that wrote nothing count: where
 *    a few rows trickle in, every snapshot's flush would set off a rewrite of the whole store, which
 *    costs more than the filter checks it saves.
 */
final class ReadTuning {
  private var memtableFilterOn = false
  private var readOnlyCommits = 0
  private var readMostly = false

  /**
   * What to change after a commit of a store of `rows` rows that wrote `written` rows (puts and
   * deletes) and holds `l0Files` files in L0.
   */
  def afterCommit(rows: Long, written: Long, l0Files: Int): ReadTuning.Change = {
    val filter = !memtableFilterOn && rows >= ReadTuning.MemtableFilterMinRows
    if (filter) memtableFilterOn = true
    readOnlyCommits = if (written == 0) readOnlyCommits + 1 else 0
    val nowReadMostly =
      if (written > 0) false
      else readMostly || (readOnlyCommits >= ReadTuning.ReadOnlyCommits && rows >= ReadTuning.ReadMostlyMinRows &&
        l0Files >= 2)
    val trigger = if (nowReadMostly == readMostly) None else Some(nowReadMostly)
    readMostly = nowReadMostly
    ReadTuning.Change(memtableFilter = filter, readMostly = trigger)
  }
}

object ReadTuning {

  /**
   * @param memtableFilter turn the memtable's whole-key filter on
   * @param readMostly Some(true): lower the L0 trigger; Some(false): restore it; None: leave it
   */
  final case class Change(memtableFilter: Boolean, readMostly: Option[Boolean]) {
    def isEmpty: Boolean = !memtableFilter && readMostly.isEmpty
  }

  /** Stores this large get the memtable filter: its ~1.3 MiB is then under 2% of what they hold. */
  val MemtableFilterMinRows = 100000L

  /** Smaller stores are left alone: their L0 is cheap to read and their compaction cheap anyway. */
  val ReadMostlyMinRows = 10000L

  /**
   * Commits in a row that wrote nothing before L0 is merged: one batch with no rows for a partition
   * does not set off a rewrite of its store.
   */
  val ReadOnlyCommits = 5
}
