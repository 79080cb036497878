package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.config.SnapshotRepair

class SnapshotRepairSuite extends AnyFunSuite {
  private val all = (_: Long) => true

  test("the bases after a failed snapshot are the older snapshots, newest first, then the state below them") {
    assert(SnapshotRepair.SparkDefault.fallbacks(25, 20, Seq(5L, 10L, 20L), 0, all) == Seq(10L, 5L, 0L))
  }

  test("a base below the adopted state's version is never one: the floor is") {
    assert(SnapshotRepair.SparkDefault.fallbacks(25, 20, Seq(5L, 10L, 20L), 7, all) == Seq(10L, 7L))
  }

  test("a base whose changelogs up to the version are not all there is not one") {
    assert(SnapshotRepair.SparkDefault.fallbacks(25, 20, Seq(5L, 10L, 20L), 0, _ != 8) == Seq(10L))
  }

  test("a base more changelogs back than maxChangelogReplay is not one") {
    val repair = SnapshotRepair.SparkDefault.copy(maxChangelogReplay = 15)
    assert(repair.fallbacks(25, 20, Seq(5L, 10L, 20L), 0, all) == Seq(10L))
  }

  test("repair off has no bases") {
    assert(SnapshotRepair.Off.fallbacks(25, 20, Seq(5L, 10L, 20L), 0, all).isEmpty)
  }
}
