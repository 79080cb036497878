package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.KnownKeys._

class KnownKeysSuite extends AnyFunSuite {

  test("a key never seen is unknown; a recorded key answers by content, not by array identity") {
    val known = new KnownKeys(10)
    assert(known.lookup(Array[Byte](1, 2)) == Unknown)
    known.record(Array[Byte](1, 2), exists = true)
    known.record(Array[Byte](3), exists = false)
    assert(known.lookup(Array[Byte](1, 2)) == Exists)
    assert(known.lookup(Array[Byte](3)) == Absent)
    assert(known.lookup(Array[Byte](1)) == Unknown)
  }

  test("the latest record of a key wins") {
    val known = new KnownKeys(10)
    known.record(Array[Byte](7), exists = true)
    known.record(Array[Byte](7), exists = false)
    assert(known.lookup(Array[Byte](7)) == Absent)
  }

  test("reaching the capacity starts over, so memory stays bounded") {
    val known = new KnownKeys(3)
    (1 to 3).foreach(i => known.record(Array(i.toByte), exists = true))
    assert(known.size == 3)
    known.record(Array[Byte](9), exists = true)
    assert(known.size == 1)
    assert(known.lookup(Array[Byte](1)) == Unknown && known.lookup(Array[Byte](9)) == Exists)
  }

  test("capacity 0 remembers nothing, and clear forgets everything") {
    val off = new KnownKeys(0)
    off.record(Array[Byte](1), exists = true)
    assert(off.lookup(Array[Byte](1)) == Unknown)
    val known = new KnownKeys(5)
    known.record(Array[Byte](1), exists = true)
    known.clear()
    assert(known.lookup(Array[Byte](1)) == Unknown)
  }
}
