package org.apache.spark.sql.execution.streaming.state

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.util.NextIterator

/**
 * ttlstore's bridge to Spark's [[SupportsFineGrainedReplay]]: its change-feed method returns
 * Spark's `NextIterator`, which is private to Spark's packages, so this class (in Spark's package)
 * adapts a plain closeable iterator from the provider. Beside it, only [[CoordinatorBridge]].
 */
abstract class FineGrainedReplayBridge extends StateStoreProvider with SupportsFineGrainedReplay {

  /**
   * The changes of versions `startVersion` to `endVersion` (under checkpoint format v2 those of the
   * lineage of `endVersion` committed as `endCheckpointId`): (type, key, value or null, batch id).
   */
  protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String],
      endCheckpointId: Option[String]): Iterator[(RecordType.Value, UnsafeRow, UnsafeRow, Long)] with AutoCloseable

  override def getStateStoreChangeDataReader(
      startVersion: Long,
      endVersion: Long,
      colFamilyNameOpt: Option[String],
      endStateStoreCkptId: Option[String]): NextIterator[(RecordType.Value, UnsafeRow, UnsafeRow, Long)] = {
    val changes = changeFeed(startVersion, endVersion, colFamilyNameOpt, endStateStoreCkptId)
    new NextIterator[(RecordType.Value, UnsafeRow, UnsafeRow, Long)] {
      override protected def getNext(): (RecordType.Value, UnsafeRow, UnsafeRow, Long) =
        if (changes.hasNext) changes.next() else { finished = true; null }
      override protected def close(): Unit = changes.close()
    }
  }
}
