package io.ttlstore.store.local

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
 * What a read learned ([[found]], [[missing]]) is kept for a later write of the key. What a write
 * did ([[written]], [[removed]]) updates what is known of the key, but a written key is not kept
 * for its own sake once other keys follow: its write needed the read, and a later one looks it up
 * again (RocksDB holds it). The most recent key sits in front of the table, so deduplication's
 * `keyExists` then `put` of a new key, the write path's commonest pair, never touches the table
 * (measured: the table's probes and growth took a quarter of a new-key deduplication's task time).
 *
 * Correct only while every change to the DB goes through [[written]] / [[removed]]: the owner
 * clears it whenever the DB changes otherwise (restore, changelog replay, abort) and at each
 * commit. When the table holds `capacity` keys it starts over, which bounds its memory; [[clear]]
 * gives large tables back, so a store between batches holds almost nothing. Not thread-safe: one
 * task at a time.
 *
 * The table: open addressing (linear probing) over parallel arrays: a lookup reads a hash and a key
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

  // The most recent key, in front of the table.
  private var recentKey: Array[Byte] = _
  private var recentStamp = 0L
  private var recentAbsent = false

  /** True while what is known of the recent key came from a read: worth keeping for a later write. */
  private var recentRead = false

  /** The recent key's slot in the table, or [[NotInTable]], or [[SlotUnknown]]. */
  private var recentSlot = SlotUnknown

  /** The stored row's timestamp, [[Absent]] if the key has no row, or null if not known. */
  def lookup(key: Array[Byte]): java.lang.Long =
    if (recentKey != null && Arrays.equals(recentKey, key)) answer(recentStamp, recentAbsent)
    else if (count == 0) null
    else {
      retire()
      val i = slotOf(key, MurmurHash3.bytesHash(key))
      if (keys(i) == null) null
      else {
        recentKey = keys(i)
        recentStamp = stamps(i)
        recentAbsent = absent(i)
        recentRead = true
        recentSlot = i
        answer(recentStamp, recentAbsent)
      }
    }

  /** A read found the key's row, stamped `timestamp`. */
  def found(key: Array[Byte], timestamp: Long): Unit = learn(key, timestamp, isAbsent = false, fromRead = true)

  /** A read found no row for the key. */
  def missing(key: Array[Byte]): Unit = learn(key, 0L, isAbsent = true, fromRead = true)

  /** A write gave the key a row stamped `timestamp`. */
  def written(key: Array[Byte], timestamp: Long): Unit = learn(key, timestamp, isAbsent = false, fromRead = false)

  /** A write removed the key's row. */
  def removed(key: Array[Byte]): Unit = learn(key, 0L, isAbsent = true, fromRead = false)

  /** Forgets every key; a table grown past its initial size is given back. */
  def clear(): Unit = {
    clearTable()
    recentKey = null
  }

  /** Keys known: those in the table, and the recent one. */
  def size: Int = count + (if (recentKey != null && recentSlot < 0) 1 else 0)

  /** Slots in the table (for tests of what [[clear]] gives back). */
  private[ttlstore] def slots: Int = keys.length

  private def answer(stamp: Long, isAbsent: Boolean): java.lang.Long =
    if (isAbsent) Absent else java.lang.Long.valueOf(stamp)

  private def learn(key: Array[Byte], stamp: Long, isAbsent: Boolean, fromRead: Boolean): Unit = if (capacity > 0) {
    if (recentKey == null || !Arrays.equals(recentKey, key)) {
      retire()
      recentKey = key
      recentSlot = if (count == 0) NotInTable else SlotUnknown
    }
    recentStamp = stamp
    recentAbsent = isAbsent
    recentRead = fromRead
    if (recentSlot >= 0) {
      stamps(recentSlot) = stamp
      absent(recentSlot) = isAbsent
    }
  }

  /**
   * The recent key leaves the front: into the table if a read learned it (a later write wants it),
   * else only updated where the table already holds it, so that it never answers stale.
   */
  private def retire(): Unit = {
    if (recentKey != null && recentSlot < 0) {
      if (recentRead) insert(recentKey, recentStamp, recentAbsent)
      else if (recentSlot == SlotUnknown && count > 0) {
        val i = slotOf(recentKey, MurmurHash3.bytesHash(recentKey))
        if (keys(i) != null) {
          stamps(i) = recentStamp
          absent(i) = recentAbsent
        }
      }
    }
    recentKey = null
  }

  private def insert(key: Array[Byte], stamp: Long, isAbsent: Boolean): Unit = {
    val hash = MurmurHash3.bytesHash(key)
    var i = slotOf(key, hash)
    if (keys(i) == null) {
      if (count >= capacity) {
        clearTable()
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

  private def clearTable(): Unit = {
    if (keys.length > InitialSlots) allocate(InitialSlots)
    else if (count > 0) Arrays.fill(keys.asInstanceOf[Array[AnyRef]], null)
    count = 0
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

  /** The recent key is known not to be in the table (it was empty when the key came). */
  private val NotInTable = -1

  /** The recent key may be in the table. */
  private val SlotUnknown = -2

  /** The table grows once more than 5/8 of its slots are taken. */
  private val LoadNumerator = 5L
  private val LoadDenominator = 8L
}
