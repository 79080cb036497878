package org.apache.spark.sql.execution.streaming.state

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.util.NextIterator

/**
 * The change feed ttlstore's provider serves to Spark's state reader (`readChangeFeed`), as the
 * `NextIterator` that [[SupportsFineGrainedReplay]] returns on every line: that class is private
 * to Spark's packages, so this object sits in Spark's package, beside each line's
 * `TtlProviderAdapter`.
 */
object ChangeFeedIterator {

  /** One change: (type, key, value or null, batch id). */
  type Change = (RecordType.Value, UnsafeRow, UnsafeRow, Long)

  /** What `getStateStoreChangeDataReader` returns. */
  type Changes = NextIterator[Change]

  def apply(changes: Iterator[Change] with AutoCloseable): Changes =
    new NextIterator[Change] {
      override protected def getNext(): Change =
        if (changes.hasNext) changes.next() else { finished = true; null }
      override protected def close(): Unit = changes.close()
    }
}
