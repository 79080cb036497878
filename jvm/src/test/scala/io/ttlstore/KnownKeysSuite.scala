package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.local.KnownKeys._
import io.ttlstore.store.local.KnownKeys

class KnownKeysSuite extends AnyFunSuite {

  test("a key never seen is unknown; a recorded key answers by content, not by array identity") {
    val known = new KnownKeys(10)
    assert(known.lookup(Array[Byte](1, 2)) == null)
    known.found(Array[Byte](1, 2), 42L)
    known.missing(Array[Byte](3))
    assert(known.lookup(Array[Byte](1, 2)) == 42L)
    assert(isAbsent(known.lookup(Array[Byte](3))))
    assert(known.lookup(Array[Byte](1)) == null)
  }

  test("a row stamped Long.MinValue is not mistaken for an absent key") {
    val known = new KnownKeys(10)
    known.found(Array[Byte](5), Long.MinValue)
    assert(!isAbsent(known.lookup(Array[Byte](5))) && known.lookup(Array[Byte](5)) == Long.MinValue)
  }

  test("the latest record of a key wins") {
    val known = new KnownKeys(10)
    known.found(Array[Byte](7), 1L)
    known.missing(Array[Byte](7))
    assert(isAbsent(known.lookup(Array[Byte](7))))
    known.written(Array[Byte](7), 3L)
    assert(known.lookup(Array[Byte](7)) == 3L)
  }

  test("what a read learned is kept for a later write, however many keys follow it") {
    val known = new KnownKeys(100)
    known.found(Array[Byte](1), 10L)
    known.missing(Array[Byte](2))
    (3 to 50).foreach(i => known.found(Array(i.toByte), i.toLong))
    assert(known.lookup(Array[Byte](1)) == 10L && isAbsent(known.lookup(Array[Byte](2))))
    assert(known.size == 50)
  }

  test("a key read then written (deduplication's keyExists and put) is known while it is the latest, then dropped") {
    val known = new KnownKeys(100)
    known.missing(Array[Byte](1))
    assert(isAbsent(known.lookup(Array[Byte](1))))
    known.written(Array[Byte](1), 5L)
    assert(known.lookup(Array[Byte](1)) == 5L)
    known.missing(Array[Byte](2))
    known.written(Array[Byte](2), 6L)
    assert(known.lookup(Array[Byte](1)) == null && known.lookup(Array[Byte](2)) == 6L)
    assert(known.size == 1 && known.slots == 1024)
  }

  test("a write of a key the table holds changes it there too: no stale answer once other keys follow") {
    val known = new KnownKeys(100)
    val (k, x, y) = (Array[Byte](1), Array[Byte](2), Array[Byte](3))
    known.found(k, 1L)
    known.found(x, 2L) // k goes into the table
    assert(known.lookup(k) == 1L)
    known.written(k, 7L) // found in the table by the lookup
    known.found(y, 3L)
    assert(known.lookup(k) == 7L)
    known.found(x, 2L)
    known.found(k.clone(), 7L) // the table holds k; this read does not look it up
    known.removed(k)
    known.found(y, 3L)
    assert(isAbsent(known.lookup(k)))
  }

  test("a key the table holds as absent answers its row once written, and is absent again once removed") {
    val known = new KnownKeys(100)
    val (k, x) = (Array[Byte](1), Array[Byte](2))
    known.missing(k)
    known.found(x, 2L) // k goes into the table, absent
    assert(isAbsent(known.lookup(k)))
    known.written(k, 5L)
    known.found(x, 2L)
    assert(known.lookup(k) == 5L)
    known.removed(k)
    known.found(x, 2L)
    assert(isAbsent(known.lookup(k)))
    assert(known.lookup(x) == 2L)
  }

  test("reaching the capacity starts over, so memory stays bounded") {
    val known = new KnownKeys(3)
    (1 to 4).foreach(i => known.found(Array(i.toByte), i.toLong))
    assert(known.size == 4) // three in the table, the latest in front of it
    known.found(Array[Byte](9), 9L)
    assert(known.size == 2)
    assert(known.lookup(Array[Byte](1)) == null && known.lookup(Array[Byte](4)) == 4L)
    assert(known.lookup(Array[Byte](9)) == 9L)
  }

  test("capacity 0 remembers nothing, and clear forgets everything") {
    val off = new KnownKeys(0)
    off.found(Array[Byte](1), 1L)
    assert(off.lookup(Array[Byte](1)) == null)
    val known = new KnownKeys(5)
    known.found(Array[Byte](1), 1L)
    known.clear()
    assert(known.lookup(Array[Byte](1)) == null)
  }

  test("many keys that differ in a few bytes are all told apart, through the table's growth") {
    val known = new KnownKeys(1000000)
    def key(i: Long): Array[Byte] = java.nio.ByteBuffer.allocate(16).putLong(8, i).array()
    (0L until 100000L).foreach(i => if (i % 3 == 0) known.missing(key(i)) else known.found(key(i), i))
    assert(known.size == 100000)
    assert((0L until 100000L).forall { i =>
      val answer = known.lookup(key(i))
      if (i % 3 == 0) isAbsent(answer) else answer == i
    })
    assert(known.lookup(key(100000L)) == null)
  }

  test("clearing a grown table gives its memory back") {
    val known = new KnownKeys(1000000)
    (0 until 50000).foreach(i => known.found(BigInt(i).toByteArray, i.toLong))
    val grown = known.slots
    known.clear()
    assert(grown >= 65536 && known.slots < grown / 32)
    known.found(Array[Byte](1), 1L)
    assert(known.lookup(Array[Byte](1)) == 1L && known.size == 1)
  }
}
