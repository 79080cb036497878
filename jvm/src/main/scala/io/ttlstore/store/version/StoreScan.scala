package io.ttlstore.store.version

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.UnsafeRowPair
import io.ttlstore.store.codec.TimestampedValue

/**
 * The rows of one scan, in key order: every row, or those whose key starts with `prefix` (legacy rows
 * included, through the [[RowCursor]]). Rows that `hidden(timestamp)` says to hide (expired, under
 * NeverReturnExpired) are stepped over and handed to `onHidden` with whether they are legacy rows (a
 * write store deletes them). `present(key, value)` gives the value to hand out (a write store with
 * OnReadAndWrite renews it). Each row is read from RocksDB once; the pair handed out is reused, as
 * Spark's own iterators do. `onEnd` runs once the scan is exhausted.
 */
final class StoreScan(
    it: RowCursor,
    prefix: Option[Array[Byte]],
    hidden: Long => Boolean,
    onHidden: (Array[Byte], Long, Boolean) => Unit,
    present: (Array[Byte], Array[Byte]) => Array[Byte],
    decodeKey: Array[Byte] => UnsafeRow,
    decodeValue: Array[Byte] => UnsafeRow,
    onEnd: () => Unit) extends Iterator[UnsafeRowPair] {

  private val pair = new UnsafeRowPair()
  private var open = true
  private var key: Array[Byte] = _
  private var value: Array[Byte] = _

  prefix match {
    case Some(p) => it.seek(p)
    case None => it.seekToFirst()
  }

  override def hasNext: Boolean = open && (key != null || advance())

  override def next(): UnsafeRowPair = {
    if (!hasNext) throw new NoSuchElementException("no more rows")
    val shown = present(key, value)
    val k = key
    key = null
    value = null
    it.next()
    pair.withRows(decodeKey(k), decodeValue(shown))
  }

  /** Moves to the next row to hand out; false (and `onEnd`) when there is none. */
  private def advance(): Boolean = {
    while (key == null && it.isValid) {
      val k = it.key()
      if (prefix.exists(p => !StoreScan.startsWith(k, p))) {
        open = false
        onEnd()
        return false
      }
      val v = it.value()
      val ts = TimestampedValue.timestamp(v)
      if (hidden(ts)) { onHidden(k, ts, it.fromLegacy); it.next() }
      else { key = k; value = v }
    }
    if (key == null) { open = false; onEnd() }
    key != null
  }
}

object StoreScan {
  def startsWith(bytes: Array[Byte], prefix: Array[Byte]): Boolean =
    bytes.length >= prefix.length &&
      java.util.Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length)
}
