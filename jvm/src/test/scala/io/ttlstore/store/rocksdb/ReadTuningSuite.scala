package io.ttlstore.store.rocksdb

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.rocksdb.ReadTuning.{Change, MemtableFilterMinRows, ReadOnlyCommits}

/** Which mutable options a store's reads ask for, commit by commit (the rule alone; no RocksDB). */
class ReadTuningSuite extends AnyFunSuite {
  private val Large = MemtableFilterMinRows
  private val Nothing = Change(memtableFilter = false, readMostly = None)

  test("a store turns its memtable filter on once, when it first holds enough rows") {
    val tuning = new ReadTuning
    assert(tuning.afterCommit(rows = Large - 1, written = 50000, l0Files = 0) == Nothing)
    assert(tuning.afterCommit(rows = Large, written = 50000, l0Files = 0).memtableFilter)
    assert(!tuning.afterCommit(rows = 2 * Large, written = 50000, l0Files = 0).memtableFilter)
  }

  test("L0 is merged after enough commits in a row that wrote nothing, and the trigger comes back with a write") {
    val tuning = new ReadTuning
    tuning.afterCommit(rows = Large, written = Large, l0Files = 3)
    val quiet = (1 to ReadOnlyCommits).map(_ => tuning.afterCommit(rows = Large, written = 0, l0Files = 3))
    assert(quiet.init.forall(_.readMostly.isEmpty), "fewer read-only commits than the rule asks for")
    assert(quiet.last.readMostly.contains(true))
    assert(tuning.afterCommit(rows = Large, written = 0, l0Files = 0) == Nothing, "still read-only: nothing changes")
    assert(tuning.afterCommit(rows = Large, written = 1, l0Files = 0).readMostly.contains(false))
  }

  test("a commit that writes starts the count of read-only commits again") {
    val tuning = new ReadTuning
    tuning.afterCommit(rows = Large, written = Large, l0Files = 3)
    (1 until ReadOnlyCommits).foreach(_ => tuning.afterCommit(rows = Large, written = 0, l0Files = 3))
    tuning.afterCommit(rows = Large, written = 10, l0Files = 3)
    (1 until ReadOnlyCommits).foreach(_ =>
      assert(tuning.afterCommit(rows = Large, written = 0, l0Files = 3) == Nothing))
    assert(tuning.afterCommit(rows = Large, written = 0, l0Files = 3).readMostly.contains(true))
  }

  test("a read-only store with fewer than two L0 files, or a small one, keeps the trigger") {
    val oneFile = new ReadTuning
    val small = new ReadTuning
    (1 to 2 * ReadOnlyCommits).foreach { _ =>
      assert(oneFile.afterCommit(rows = Large, written = 0, l0Files = 1).readMostly.isEmpty)
      assert(small.afterCommit(rows = ReadTuning.ReadMostlyMinRows - 1, written = 0, l0Files = 4).readMostly.isEmpty)
    }
  }
}
