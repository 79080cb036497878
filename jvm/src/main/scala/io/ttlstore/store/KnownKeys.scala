package io.ttlstore.store

import java.util.{Arrays, HashMap => JHashMap}

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
 * commit. When it holds `capacity` keys it starts over, which bounds its memory. Not thread-safe:
 * one task at a time.
 */
final class KnownKeys(capacity: Int) {
  import KnownKeys._

  private val known = new JHashMap[Key, java.lang.Long]()

  /** The stored row's timestamp, [[Absent]] if the key has no row, or null if not known. */
  def lookup(key: Array[Byte]): java.lang.Long =
    if (known.isEmpty) null else known.get(new Key(key))

  /** The key has a row stamped `timestamp`. */
  def record(key: Array[Byte], timestamp: Long): Unit = put(key, java.lang.Long.valueOf(timestamp))

  /** The key has no row. */
  def recordAbsent(key: Array[Byte]): Unit = put(key, Absent)

  def clear(): Unit = known.clear()

  def size: Int = known.size

  private def put(key: Array[Byte], value: java.lang.Long): Unit = if (capacity > 0) {
    if (known.size >= capacity) known.clear()
    known.put(new Key(key), value)
  }
}

object KnownKeys {

  /**
   * Marks a key without a row. Compared by reference: `Long.valueOf` caches only -128..127, so
   * this box is never the one a recorded timestamp gets, even a timestamp of Long.MinValue.
   */
  val Absent: java.lang.Long = java.lang.Long.valueOf(Long.MinValue)

  def isAbsent(answer: java.lang.Long): Boolean = answer eq Absent

  /**
   * Key bytes compared by content; the array must not change afterwards (callers own copies).
   * Hashed with MurmurHash3: `Arrays.hashCode` (31 * h + b) gives keys that differ in a few low
   * bytes, such as UnsafeRows of consecutive longs, so few distinct hashes that the map's bins
   * degrade into trees (measured: most of a deduplication batch's time went to `HashMap.putVal`).
   */
  private final class Key(val bytes: Array[Byte]) {
    override val hashCode: Int = MurmurHash3.bytesHash(bytes)
    override def equals(other: Any): Boolean = other match {
      case k: Key => Arrays.equals(bytes, k.bytes)
      case _ => false
    }
  }
}
