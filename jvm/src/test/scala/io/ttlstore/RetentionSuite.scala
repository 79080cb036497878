package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import scala.collection.immutable.SortedSet

import io.ttlstore.checkpoint.{Listing, Retention, VersionFile}

class RetentionSuite extends AnyFunSuite {

  private def listing(changelogs: Range, snapshots: Long*) =
    Listing.ofVersions(changelogs.map(_.toLong), snapshots)

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
    assert(Listing.temporaryVersion(".12_6f1c-e2.changelog.9a0b.tmp").contains(12L))
  }

  test("files of checkpoint format v2 are told by name, with their version and checkpoint id") {
    assert(Listing.committedFile("12_6f1c-e2.changelog", ".changelog").contains(VersionFile(12, Some("6f1c-e2"))))
    assert(Listing.committedFile("12.snapshot", ".snapshot").contains(VersionFile(12, None)))
    assert(Listing.committedFile("12_.changelog", ".changelog").isEmpty)
    assert(Listing.committedFile("12_a/b.changelog", ".changelog").isEmpty)
    assert(Listing.committedFile("x_a.changelog", ".changelog").isEmpty)
  }

  test("under checkpoint format v2 the base is the oldest one a retained attempt's lineage needs") {
    // Version 16 was committed twice: attempt "a" built on the snapshot of 10, attempt "b" (a retry
    // after a restore) on the snapshot of 15 that an attempt of 15 wrote. Whichever one Spark's
    // commit log names must stay loadable, so the snapshot of 10 stays.
    def files(vs: Seq[(Long, String)]) = SortedSet.from(vs.map { case (v, id) => VersionFile(v, Some(id)) })
    val changelogs = files((1L to 20L).map(_ -> "x") ++ Seq(16L -> "a", 16L -> "b"))
    val snapshots = files(Seq(5L -> "x", 10L -> "x", 15L -> "x"))
    val listed = Listing(changelogs, snapshots)
    val lineageBase = Map(VersionFile(16, Some("a")) -> 10L, VersionFile(16, Some("b")) -> 15L,
      VersionFile(16, Some("x")) -> 15L)
    val plan = Retention.plan(listed, minVersionsToRetain = 5, lineageBase).get
    assert(plan.keepFrom == 16 && plan.baseSnapshot == 10)
    assert(plan.deleteSnapshots == Seq(5L) && plan.deleteChangelogs == (1L to 9L))
    // Without the attempt built on 10, the newest snapshot below the oldest retained version is the base.
    val alone =
      Retention.plan(listed, minVersionsToRetain = 5, lineageBase.updated(VersionFile(16, Some("a")), 15L)).get
    assert(alone.baseSnapshot == 15)
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

  test("a limited plan deletes the oldest versions first and keeps its base") {
    val whole = Retention.plan(listing(1 to 20, 5, 10, 15), minVersionsToRetain = 8).get
    val cut = Retention.limited(whole, Some(6))
    assert(cut.deleteChangelogs == (1L to 6L) && cut.deleteSnapshots == Seq(5L) && cut.baseSnapshot == 10)
    assert(!Retention.complete(cut, whole))
    assert(Retention.complete(Retention.limited(whole, Some(9)), whole))
    assert(Retention.limited(whole, None) == whole)
  }
}
