package io.ttlstore

import java.nio.ByteBuffer

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.local.KeyBloom

class KeyBloomSuite extends AnyFunSuite {

  private def k(i: Long): Array[Byte] = ByteBuffer.allocate(16).putLong(0L).putLong(i).array()

  test("every key added is contained, in whichever part it went") {
    val bloom = new KeyBloom(firstCapacity = 1000)
    (0L until 50000L).foreach(i => bloom.add(k(i)))
    assert((0L until 50000L).forall(i => bloom.mightContain(k(i))))
    assert(bloom.bytes > 1000L * KeyBloom.BitsPerKey / 8 * 32) // it grew past its first part
  }

  test("keys never added are answered absent but for about 1% per part") {
    val bloom = new KeyBloom(firstCapacity = 1 << 14)
    (0L until 100000L).foreach(i => bloom.add(k(i)))
    val wrong = (1000000L until 1100000L).count(i => bloom.mightContain(k(i)))
    assert(wrong < 100000 * 0.04, s"$wrong false positives in 100,000")
    assert(!new KeyBloom().mightContain(k(1)))
  }

  test("a key added again, as updates do, is counted once and grows nothing") {
    val bloom = new KeyBloom(firstCapacity = 100)
    (1 to 5).foreach(_ => (0L until 100L).foreach(i => bloom.add(k(i))))
    assert(bloom.keys <= 100 && bloom.keys > 90)
    assert(bloom.bytes == new KeyBloom(firstCapacity = 100).bytes)
  }

  test("a key added as new, as a write of a key the DB did not hold, is contained and counted without a check") {
    val bloom = new KeyBloom(firstCapacity = 1000)
    (0L until 5000L).foreach(i => bloom.addNew(k(i)))
    assert((0L until 5000L).forall(i => bloom.mightContain(k(i))))
    assert(bloom.keys == 5000)
    (0L until 100L).foreach(i => bloom.addNew(k(i)))
    assert(bloom.keys == 5100, "counted again: the caller said it was new")
  }
}
