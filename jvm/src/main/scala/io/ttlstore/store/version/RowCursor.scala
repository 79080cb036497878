package io.ttlstore.store.version

import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.rocksdb.CheckedIterator

/**
 * A position in a store's rows, in key order, with values in the timestamped format. Scans read
 * through it whether or not the store still holds legacy rows.
 */
trait RowCursor extends AutoCloseable {
  def seekToFirst(): Unit
  def seek(key: Array[Byte]): Unit
  def isValid: Boolean
  def key(): Array[Byte]

  /** The row's value as `[timestamp][row]`; a legacy row gets the legacy stamp. */
  def value(): Array[Byte]

  /** True if the current row is a legacy row (still in the legacy family). */
  def fromLegacy: Boolean
  def next(): Unit
}

object RowCursor {

  /** The timestamped family alone (no legacy rows). */
  final class Current(it: CheckedIterator) extends RowCursor {
    override def seekToFirst(): Unit = it.seekToFirst()
    override def seek(key: Array[Byte]): Unit = it.seek(key)
    override def isValid: Boolean = it.isValid
    override def key(): Array[Byte] = it.key()
    override def value(): Array[Byte] = it.value()
    override def fromLegacy: Boolean = false
    override def next(): Unit = it.next()
    override def close(): Unit = it.close()
  }

  /**
   * Both families merged in key order without moving anything (KIP-258). A key is in at most one
   * family (every write takes it out of the legacy one); were it in both, the timestamped row wins.
   */
  final class Merged(current: CheckedIterator, legacy: CheckedIterator, legacyStamp: Long) extends RowCursor {
    private var onLegacy = false

    override def seekToFirst(): Unit = { current.seekToFirst(); legacy.seekToFirst(); pick() }
    override def seek(key: Array[Byte]): Unit = { current.seek(key); legacy.seek(key); pick() }
    override def isValid: Boolean = current.isValid || legacy.isValid
    override def key(): Array[Byte] = if (onLegacy) legacy.key() else current.key()
    override def value(): Array[Byte] =
      if (onLegacy) {
        val v = legacy.value()
        TimestampedValue.encode(legacyStamp, v, 0, v.length)
      } else current.value()
    override def fromLegacy: Boolean = onLegacy
    override def next(): Unit = {
      if (onLegacy) legacy.next()
      else {
        // Skip a legacy row shadowed by the timestamped row just read.
        if (legacy.isValid && java.util.Arrays.compareUnsigned(legacy.key(), current.key()) == 0) legacy.next()
        current.next()
      }
      pick()
    }
    override def close(): Unit = { current.close(); legacy.close() }

    private def pick(): Unit =
      onLegacy = legacy.isValid &&
        (!current.isValid || java.util.Arrays.compareUnsigned(legacy.key(), current.key()) < 0)
  }
}
