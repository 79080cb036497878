package io.ttlstore.readahead

import java.util.ArrayDeque

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}

/**
 * A stateful operator's input, read ahead: while the store ([[ReadAheadTarget]]) wants it, rows are pulled from
 * `input` in chunks of half of `rows` (copied: Spark reuses its rows), each row's state key is handed to the store,
 * and the rows are handed on in their order; the next chunk is pulled when half of the held rows are out, so the
 * store reads one chunk's keys while the operator works through the one before. At most `rows` rows and about
 * `maxBytes` of them are held. Without a target (a store of another provider, a version not found) rows pass
 * straight through; a store that does not want the next chunk read ahead is asked again a chunk's rows later.
 */
final class ReadAheadIterator(
    input: Iterator[InternalRow],
    keyOf: UnsafeProjection,
    findTarget: () => Option[ReadAheadTarget],
    rows: Int,
    maxBytes: Long)
  extends Iterator[InternalRow] {

  private val chunk = math.max(1, rows / 2)
  private val held = new ArrayDeque[InternalRow]()
  private var heldBytes = 0L
  private var target: Option[ReadAheadTarget] = null

  /** Rows still to hand on straight, the store having declined to read them ahead. */
  private var passing = 0

  override def hasNext: Boolean = {
    fill()
    !held.isEmpty || input.hasNext
  }

  override def next(): InternalRow = {
    fill()
    if (held.isEmpty) {
      if (passing > 0) passing -= 1
      input.next()
    } else {
      val row = held.poll()
      heldBytes -= ReadAheadIterator.size(row)
      row
    }
  }

  private def fill(): Unit = {
    if (target == null) target = findTarget()
    target match {
      case Some(store) if passing == 0 && held.size <= chunk && input.hasNext =>
        if (!store.wanted()) passing = chunk
        else {
          var n = 0
          while (n < chunk && heldBytes < maxBytes && input.hasNext) {
            val row = input.next().copy()
            held.add(row)
            heldBytes += ReadAheadIterator.size(row)
            store.ask(keyOf(row))
            n += 1
          }
          store.send()
        }
      case _ =>
    }
  }
}

object ReadAheadIterator {

  /** A held row's bytes (an estimate for rows not in Spark's binary layout). */
  def size(row: InternalRow): Long = row match {
    case u: UnsafeRow => u.getSizeInBytes.toLong + 16L
    case _ => 64L
  }
}
