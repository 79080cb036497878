package io.ttlstore.store.codec

import io.ttlstore.bytes.Bytes

/**
 * The byte layout of a value in the current-format column family (`timestamped`):
 *
 * {{{
 *   offset 0                8                         8 + n
 *          +----------------+-------------------------+
 *          | timestamp      | value row               |
 *          | int64, big-    | Spark UnsafeRow bytes   |
 *          | endian, epoch  | (n bytes, n % 8 == 0)   |
 *          | milliseconds   |                         |
 *          +----------------+-------------------------+
 * }}}
 *
 * The timestamp is the row's last-write time. It sits at a fixed offset with a fixed width so that
 * native code (the compaction filter) reads it without decoding the row. There is no per-row
 * version byte: rows of an older layout live in their own column family (KIP-258's reasoning).
 *
 * Pure functions over byte arrays: no clock, no I/O.
 */
object TimestampedValue {

  /** Where the timestamp sits in a stored value (the native filter reads it there). */
  val TimestampOffset: Int = 0
  val TimestampBytes: Int = 8

  /** Builds the stored value from a timestamp and the row bytes at `base[offset, offset+len)`. */
  def encode(timestamp: Long, rowBytes: Array[Byte], offset: Int, length: Int): Array[Byte] = {
    val out = allocate(timestamp, length)
    System.arraycopy(rowBytes, offset, out, TimestampBytes, length)
    out
  }

  /** A stored value with the timestamp written and `rowLength` bytes at [[rowOffset]] to fill. */
  def allocate(timestamp: Long, rowLength: Int): Array[Byte] = {
    val out = new Array[Byte](TimestampBytes + rowLength)
    Bytes.writeLong(out, TimestampOffset, timestamp)
    out
  }

  def encode(timestamp: Long, rowBytes: Array[Byte]): Array[Byte] =
    encode(timestamp, rowBytes, 0, rowBytes.length)

  /** True when `stored` is long enough to hold a timestamp (anything shorter is kept as is). */
  def hasTimestamp(stored: Array[Byte]): Boolean = stored != null && stored.length >= TimestampBytes

  def timestamp(stored: Array[Byte]): Long = Bytes.readLong(stored, TimestampOffset)

  def rowOffset: Int = TimestampBytes

  def rowLength(stored: Array[Byte]): Int = stored.length - TimestampBytes
}
