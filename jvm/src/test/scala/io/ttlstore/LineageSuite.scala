package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.{Lineage, LineageItem}

/** Checkpoint format v2: how a version's recorded lineage leads back to the files that rebuild it. */
class LineageSuite extends AnyFunSuite {

  private def item(v: Long, id: String = "") = LineageItem(v, if (id.isEmpty) s"id$v" else id)
  private def items(vs: Long*) = vs.map(item(_)).toVector

  test("a version's lineage is what its changelog recorded, then itself, in consecutive versions") {
    assert(Lineage.of(items(3, 4, 5), item(6)) == Right(items(3, 4, 5, 6)))
    assert(Lineage.of(Nil, item(1)) == Right(items(1)))
    assert(Lineage.of(items(3, 5), item(6)).left.exists(_.contains("3 is followed by 5")))
    assert(Lineage.of(items(3, 4), item(6)).left.exists(_.contains("4 is followed by 6")))
  }

  test("a load starts from the newest snapshot in the lineage, never another attempt's") {
    val lineage = items(3, 4, 5, 6)
    assert(Lineage.base(lineage, Set(item(3), item(5))) == Right(Some(item(5))))
    // A snapshot of version 6 written by a discarded attempt is not this lineage's.
    assert(Lineage.base(lineage, Set(item(3), item(6, "other"))) == Right(Some(item(3))))
  }

  test("without a snapshot a lineage loads from the empty state only if it reaches back to version 1") {
    assert(Lineage.base(items(1, 2, 3), _ => false) == Right(None))
    assert(Lineage.base(items(4, 5), _ => false).left.exists(_.contains("no snapshot")))
  }

  test("a load starts at its base and replays the lineage from there; a gap or a lost base is named") {
    assert(Lineage.fromBase(items(3, 4, 5), item(6), Set(item(4))) == Right(Some(item(4)) -> items(4, 5, 6)))
    assert(Lineage.fromBase(items(1, 2), item(3), _ => false) == Right(None -> items(1, 2, 3)))
    assert(Lineage.fromBase(items(3, 5), item(6), _ => true).isLeft)
    assert(Lineage.fromBase(items(4, 5), item(6), _ => false).isLeft)
  }

  test("once a snapshot of the lineage exists, the lineage recorded from then on starts there") {
    assert(Lineage.from(items(1, 2, 3, 4), item(3)) == items(3, 4))
    assert(Lineage.from(items(1, 2, 3, 4), item(3, "other")) == items(1, 2, 3, 4))
  }

  test("walking back from a version follows each changelog's lineage to the start version") {
    // Version 7's changelog records 5..6 (its base is the snapshot of 5); version 5's records 2..4.
    val recorded = Map(item(7) -> items(5, 6), item(5) -> items(2, 3, 4), item(6) -> items(5))
    assert(Lineage.walkBack(2, item(7), recorded) == Right(items(2, 3, 4, 5, 6, 7)))
    assert(Lineage.walkBack(6, item(7), recorded) == Right(items(6, 7)))
    assert(Lineage.walkBack(7, item(7), recorded) == Right(items(7)))
    assert(Lineage.walkBack(1, item(7), recorded.withDefaultValue(Nil)).left.exists(_.contains("records no version")))
  }
}
