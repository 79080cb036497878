package io.ttlstore

import scala.collection.immutable.SortedSet

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.{Listing, Retention}

class RetentionSuite extends AnyFunSuite {

  private def listing(changelogs: Range, snapshots: Long*) =
    Listing(SortedSet(changelogs.map(_.toLong): _*), SortedSet(snapshots: _*))

  test("without snapshots nothing can be deleted: every changelog back to 1 is needed") {
    val plan = Retention.plan(listing(1 to 20), minVersionsToRetain = 5).get
    assert(plan.baseSnapshot == 0 && plan.deleteChangelogs.isEmpty && plan.deleteSnapshots.isEmpty)
  }

  test("the newest snapshot at or below the oldest retained version is the base; older files go") {
    val plan = Retention.plan(listing(1 to 20, 5, 10, 15), minVersionsToRetain = 8).get
    assert(plan.keepFrom == 13)
    assert(plan.baseSnapshot == 10)
    assert(plan.deleteSnapshots == Seq(5L))
    assert(plan.deleteChangelogs == (1L to 9L))
  }

  test("a snapshot exactly at the oldest retained version is the base") {
    val plan = Retention.plan(listing(1 to 12, 10), minVersionsToRetain = 3).get
    assert(plan.keepFrom == 10 && plan.baseSnapshot == 10 && plan.deleteChangelogs == (1L to 9L))
  }

  test("adopted Spark files may go only once every retained version builds on a newer own snapshot") {
    // Adopted at version 10; own changelogs 11..20.
    val noSnapshot = Retention.plan(listing(11 to 20), minVersionsToRetain = 3).get
    assert(!Retention.adoptedFilesDeletable(noSnapshot, Some(10L)))
    val snapshotAbove = Retention.plan(listing(11 to 20, 15), minVersionsToRetain = 3).get
    assert(Retention.adoptedFilesDeletable(snapshotAbove, Some(10L)))
    assert(!Retention.adoptedFilesDeletable(snapshotAbove, Some(15L)), "a snapshot at the adopted version is not newer")
    val stillNeeded = Retention.plan(listing(11 to 20, 15), minVersionsToRetain = 8).get
    assert(!Retention.adoptedFilesDeletable(stillNeeded, Some(10L)), "version 13 still builds on the adopted state")
    assert(!Retention.adoptedFilesDeletable(snapshotAbove, None))
  }

  test("temporary files are told by name, with the version they were written for") {
    assert(Listing.temporaryVersion(".12.changelog.6f1c-e2.TID41.tmp").contains(12L))
    assert(Listing.temporaryVersion(".12.snapshot.6f1c-e2.tmp").contains(12L))
    assert(Listing.temporaryVersion("..12.changelog.6f1c-e2.tmp.crc").contains(12L))
    assert(Listing.temporaryVersion("12.changelog").isEmpty)
    assert(Listing.temporaryVersion(".12.changelog.crc").isEmpty)
    assert(Listing.temporaryVersion(".adopted.json.6f1c.tmp").isEmpty)
  }

  test("temporary files go once their version is older than every retained one") {
    val plan = Retention.plan(listing(1 to 20, 5, 10, 15), minVersionsToRetain = 8).get
    val temporary = Map(".3.changelog.a.tmp" -> 3L, ".12.snapshot.b.tmp" -> 12L, ".13.changelog.c.tmp" -> 13L)
    assert(Retention.leftoverTemporaries(plan, temporary) == Seq(".12.snapshot.b.tmp", ".3.changelog.a.tmp"))
  }

  test("an empty directory has no plan") {
    assert(Retention.plan(listing(1 to 0), 5).isEmpty)
  }

  test("orphan SSTs are only those unreferenced and older than the oldest retained snapshot") {
    val files = Seq("a.sst" -> 100L, "b.sst" -> 100L, "c.sst" -> 500L)
    assert(Retention.orphanSsts(files, Set("a.sst"), Some(200L)) == Seq("b.sst"))
    assert(Retention.orphanSsts(files, Set.empty, None).isEmpty)
  }
}
