package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.KnownKeys
import io.ttlstore.store.KnownKeys._

class KnownKeysSuite extends AnyFunSuite {

  test("a key never seen is unknown; a recorded key answers by content, not by array identity") {
    val known = new KnownKeys(10)
    assert(known.lookup(Array[Byte](1, 2)) == null)
    known.record(Array[Byte](1, 2), 42L)
    known.recordAbsent(Array[Byte](3))
    assert(known.lookup(Array[Byte](1, 2)) == 42L)
    assert(isAbsent(known.lookup(Array[Byte](3))))
    assert(known.lookup(Array[Byte](1)) == null)
  }

  test("a row stamped Long.MinValue is not mistaken for an absent key") {
    val known = new KnownKeys(10)
    known.record(Array[Byte](5), Long.MinValue)
    assert(!isAbsent(known.lookup(Array[Byte](5))) && known.lookup(Array[Byte](5)) == Long.MinValue)
  }

  test("the latest record of a key wins") {
    val known = new KnownKeys(10)
    known.record(Array[Byte](7), 1L)
    known.recordAbsent(Array[Byte](7))
    assert(isAbsent(known.lookup(Array[Byte](7))))
  }

  test("reaching the capacity starts over, so memory stays bounded") {
    val known = new KnownKeys(3)
    (1 to 3).foreach(i => known.record(Array(i.toByte), i.toLong))
    assert(known.size == 3)
    known.record(Array[Byte](9), 9L)
    assert(known.size == 1)
    assert(known.lookup(Array[Byte](1)) == null && known.lookup(Array[Byte](9)) == 9L)
  }

  test("capacity 0 remembers nothing, and clear forgets everything") {
    val off = new KnownKeys(0)
    off.record(Array[Byte](1), 1L)
    assert(off.lookup(Array[Byte](1)) == null)
    val known = new KnownKeys(5)
    known.record(Array[Byte](1), 1L)
    known.clear()
    assert(known.lookup(Array[Byte](1)) == null)
  }

  test("many keys that differ in a few bytes are all told apart, through the table's growth") {
    val known = new KnownKeys(1000000)
    def key(i: Long): Array[Byte] = java.nio.ByteBuffer.allocate(16).putLong(8, i).array()
    (0L until 100000L).foreach(i => if (i % 3 == 0) known.recordAbsent(key(i)) else known.record(key(i), i))
    assert(known.size == 100000)
    assert((0L until 100000L).forall { i =>
      val answer = known.lookup(key(i))
      if (i % 3 == 0) isAbsent(answer) else answer == i
    })
    assert(known.lookup(key(100000L)) == null)
  }

  test("clearing a grown table gives its memory back") {
    val known = new KnownKeys(1000000)
    (0 until 50000).foreach(i => known.record(BigInt(i).toByteArray, i.toLong))
    val grown = known.slots
    known.clear()
    assert(grown >= 65536 && known.slots < grown / 32)
    known.record(Array[Byte](1), 1L)
    assert(known.lookup(Array[Byte](1)) == 1L && known.size == 1)
  }
}
