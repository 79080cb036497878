package org.apache.spark.sql.execution.streaming.state

/**
 * Spark 3.5 has no state reader (`format("statestore")`, with `snapshotStartBatchId` and
 * `readChangeFeed`, came with 4.0): nothing calls these; the provider implements them for the later
 * lines.
 */
trait FineGrainedReplay {

  def replayStateFromSnapshot(snapshotVersion: Long, endVersion: Long, readOnly: Boolean,
      startCheckpointId: Option[String], endCheckpointId: Option[String]): StateStore

  protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String],
      endCheckpointId: Option[String]): Iterator[ChangeFeedIterator.Change] with AutoCloseable
}
