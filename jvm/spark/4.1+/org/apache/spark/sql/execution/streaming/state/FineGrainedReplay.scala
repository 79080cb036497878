package org.apache.spark.sql.execution.streaming.state

/**
 * Spark's state reader options `snapshotStartBatchId` and `readChangeFeed` (4.1 and later: with
 * checkpoint ids). The provider implements `replayStateFromSnapshot` and [[changeFeed]].
 */
trait FineGrainedReplay extends SupportsFineGrainedReplay {

  /** The changes of versions `startVersion` to `endVersion` (under checkpoint format v2, of `endCheckpointId`'s lineage). */
  protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String],
      endCheckpointId: Option[String]): Iterator[ChangeFeedIterator.Change] with AutoCloseable

  override def getStateStoreChangeDataReader(startVersion: Long, endVersion: Long, colFamilyNameOpt: Option[String],
      endStateStoreCkptId: Option[String]): ChangeFeedIterator.Changes =
    ChangeFeedIterator(changeFeed(startVersion, endVersion, colFamilyNameOpt, endStateStoreCkptId))
}
