package io.ttlstore

import java.util.{Arrays, HashMap => JHashMap}

/**
 * Whether keys exist in the local DB, as learned from this version's reads and writes.
 *
 * Spark's operators read a key before they write it: aggregation reads every key through the read
 * store, aggregates, then writes through the write store; deduplication calls `keyExists` then
 * `put`. Keeping `numRowsTotal` exact needs to know, on each put and remove, whether the key
 * existed, and this record answers from the earlier read instead of a second RocksDB lookup.
 *
 * Correct only while every change to the DB goes through [[record]]: the owner clears it whenever
 * the DB changes otherwise (restore, changelog replay, abort) and at each commit. When it holds
 * `capacity` keys it starts over, which bounds its memory. Not thread-safe: one task at a time.
 */
final class KnownKeys(capacity: Int) {
  import KnownKeys._

  private val known = new JHashMap[Key, java.lang.Boolean]()

  /** [[Exists]], [[Absent]] or [[Unknown]]. */
  def lookup(key: Array[Byte]): Int =
    if (known.isEmpty) Unknown
    else {
      val found = known.get(new Key(key))
      if (found == null) Unknown else if (found) Exists else Absent
    }

  def record(key: Array[Byte], exists: Boolean): Unit = if (capacity > 0) {
    if (known.size >= capacity) known.clear()
    known.put(new Key(key), java.lang.Boolean.valueOf(exists))
  }

  def clear(): Unit = known.clear()

  def size: Int = known.size
}

object KnownKeys {
  val Unknown: Int = -1
  val Absent: Int = 0
  val Exists: Int = 1

  /** Key bytes compared by content; the array must not change afterwards (callers own copies). */
  private final class Key(val bytes: Array[Byte]) {
    override val hashCode: Int = Arrays.hashCode(bytes)
    override def equals(other: Any): Boolean = other match {
      case k: Key => Arrays.equals(bytes, k.bytes)
      case _ => false
    }
  }
}
