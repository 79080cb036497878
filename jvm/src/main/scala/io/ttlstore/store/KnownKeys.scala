package io.ttlstore.store

import java.util.Arrays

import scala.util.hashing.MurmurHash3

/**
 * Which keys exist in the local DB, and with which timestamp, as learned from this version's reads
 * and writes.
 *
 * Spark's operators read a key before they write it: aggregation reads every key through the read
 * store, aggregates, then writes through the write store; deduplication calls `keyExists` then
 * `put`. Keeping `numRowsTotal` and the [[TimestampHistogram]] exact needs, on each put and remove,
 * the timestamp of the row being replaced, and this record answers from the earlier read instead
 * of a second RocksDB lookup.
 *
 * Correct only while every change to the DB goes through [[record]] / [[recordAbsent]]: the owner
 * clears it whenever the DB changes otherwise (restore, changelog replay, abort) and at each
 * commit. When it holds `capacity` keys it starts over, which bounds its memory; [[clear]] gives
 * large tables back, so a store between batches holds almost nothing. Not thread-safe: one task
 * at a time.
 *
 * An open-addressing table (linear probing) over parallel arrays: a lookup reads a hash and a key
 * reference and compares the key's bytes, with no node, no wrapper and no boxed timestamp per entry
 * (measured: with `java.util.HashMap` these took 13% of an aggregation's executor time at 1M keys
 * per store). Keys are hashed with MurmurHash3: `Arrays.hashCode` (31 * h + b) gives keys that
 * differ in a few low bytes, such as UnsafeRows of consecutive longs, few distinct hashes.
 */
final class KnownKeys(capacity: Int) {
  import KnownKeys._

  private var keys = new Array[Array[Byte]](InitialSlots)
  private var hashes = new Array[Int](InitialSlots)
  private var stamps = new Array[Long](InitialSlots)
  private var absent = new Array[Boolean](InitialSlots)
  private var count = 0

  /** The stored row's timestamp, [[Absent]] if the key has no row, or null if not known. */
  def lookup(key: Array[Byte]): java.lang.Long =
    if (count == 0) null
    else {
      val i = slotOf(key, MurmurHash3.bytesHash(key))
      if (keys(i) == null) null
      else if (absent(i)) Absent
      else java.lang.Long.valueOf(stamps(i))
    }

  /** The key has a row stamped `timestamp`. */
  def record(key: Array[Byte], timestamp: Long): Unit = put(key, timestamp, isAbsent = false)

  /** The key has no row. */
  def recordAbsent(key: Array[Byte]): Unit = put(key, 0L, isAbsent = true)

  /** Forgets every key; a table grown past its initial size is given back. */
  def clear(): Unit = {
    if (keys.length > InitialSlots) allocate(InitialSlots)
    else if (count > 0) Arrays.fill(keys.asInstanceOf[Array[AnyRef]], null)
    count = 0
  }

  def size: Int = count

  /** Slots in the table (for tests of what [[clear]] gives back). */
  private[ttlstore] def slots: Int = keys.length

  private def put(key: Array[Byte], stamp: Long, isAbsent: Boolean): Unit = if (capacity > 0) {
    val hash = MurmurHash3.bytesHash(key)
    var i = slotOf(key, hash)
    if (keys(i) == null) {
      if (count >= capacity) {
        clear()
        i = slotOf(key, hash)
      } else if ((count + 1).toLong * LoadDenominator > keys.length.toLong * LoadNumerator) {
        grow()
        i = slotOf(key, hash)
      }
      keys(i) = key
      hashes(i) = hash
      count += 1
    }
    stamps(i) = stamp
    absent(i) = isAbsent
  }

  /** The slot holding `key`, or the empty slot where it would go. */
  private def slotOf(key: Array[Byte], hash: Int): Int = {
    val mask = keys.length - 1
    var i = hash & mask
    while (keys(i) != null && (hashes(i) != hash || !Arrays.equals(keys(i), key))) i = (i + 1) & mask
    i
  }

  private def grow(): Unit = {
    val (oldKeys, oldHashes, oldStamps, oldAbsent) = (keys, hashes, stamps, absent)
    allocate(keys.length * 2)
    val mask = keys.length - 1
    var j = 0
    while (j < oldKeys.length) {
      if (oldKeys(j) != null) {
        var i = oldHashes(j) & mask
        while (keys(i) != null) i = (i + 1) & mask
        keys(i) = oldKeys(j)
        hashes(i) = oldHashes(j)
        stamps(i) = oldStamps(j)
        absent(i) = oldAbsent(j)
      }
      j += 1
    }
  }

  private def allocate(slots: Int): Unit = {
    keys = new Array[Array[Byte]](slots)
    hashes = new Array[Int](slots)
    stamps = new Array[Long](slots)
    absent = new Array[Boolean](slots)
  }
}

object KnownKeys {

  /**
   * Marks a key without a row. Compared by reference: `Long.valueOf` caches only -128..127, so
   * this box is never the one a recorded timestamp gets, even a timestamp of Long.MinValue.
   */
  val Absent: java.lang.Long = java.lang.Long.valueOf(Long.MinValue)

  def isAbsent(answer: java.lang.Long): Boolean = answer eq Absent

  /** Slots of a new or cleared table (a power of two). */
  private val InitialSlots = 1024

  /** The table grows once more than 5/8 of its slots are taken. */
  private val LoadNumerator = 5L
  private val LoadDenominator = 8L
}
