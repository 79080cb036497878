package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming

/** Where Spark 3.5 and 4.0 keep the classes ttlstore names: all in `sql.execution.streaming`. */
object SparkClasses {
  type CheckpointFileManager = streaming.CheckpointFileManager
  val CheckpointFileManager: streaming.CheckpointFileManager.type = streaming.CheckpointFileManager

  type StatefulOperator = streaming.StatefulOperator
  type StreamingSymmetricHashJoinExec = streaming.StreamingSymmetricHashJoinExec
  type StatefulOperatorStateInfo = streaming.StatefulOperatorStateInfo

  // The classic operators whose state reads ttlstore reads ahead (io.ttlstore.readahead.ReadAheadRule).
  type StateStoreRestoreExec = streaming.StateStoreRestoreExec
  type BaseStreamingDeduplicateExec = streaming.BaseStreamingDeduplicateExec
  type FlatMapGroupsWithStateExec = streaming.FlatMapGroupsWithStateExec

  /** The local property that carries a streaming query's id into its tasks. */
  val QueryIdKey: String = streaming.StreamExecution.QUERY_ID_KEY
}
