package org.apache.spark.sql.execution.streaming.state

/**
 * Spark's state reader options `snapshotStartBatchId` and `readChangeFeed` as Spark 4.0 asks for
 * them (no checkpoint ids, no read-only flag), passed on in the terms of the later lines that the
 * provider implements.
 */
trait FineGrainedReplay extends SupportsFineGrainedReplay {

  /** Version `endVersion` built from the snapshot of `snapshotVersion` and the changelogs after it. */
  def replayStateFromSnapshot(snapshotVersion: Long, endVersion: Long, readOnly: Boolean,
      startCheckpointId: Option[String], endCheckpointId: Option[String]): StateStore

  /** The changes of versions `startVersion` to `endVersion`. */
  protected def changeFeed(startVersion: Long, endVersion: Long, colFamilyName: Option[String],
      endCheckpointId: Option[String]): Iterator[ChangeFeedIterator.Change] with AutoCloseable

  override def replayStateFromSnapshot(snapshotVersion: Long, endVersion: Long): StateStore =
    replayStateFromSnapshot(snapshotVersion, endVersion, readOnly = false, None, None)

  override def replayReadStateFromSnapshot(snapshotVersion: Long, endVersion: Long): ReadStateStore =
    replayStateFromSnapshot(snapshotVersion, endVersion, readOnly = true, None, None)

  override def getStateStoreChangeDataReader(startVersion: Long, endVersion: Long,
      colFamilyNameOpt: Option[String]): ChangeFeedIterator.Changes =
    ChangeFeedIterator(changeFeed(startVersion, endVersion, colFamilyNameOpt, None))
}
