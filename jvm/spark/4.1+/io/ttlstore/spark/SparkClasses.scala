package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.checkpointing
import org.apache.spark.sql.execution.streaming.operators.stateful
import org.apache.spark.sql.execution.streaming.runtime.StreamExecution

/**
 * Where Spark 4.1 and later keep the classes ttlstore names: 4.1 moved them from
 * `sql.execution.streaming` into `checkpointing`, `runtime` and `operators.stateful`.
 */
object SparkClasses {
  type CheckpointFileManager = checkpointing.CheckpointFileManager
  val CheckpointFileManager: checkpointing.CheckpointFileManager.type = checkpointing.CheckpointFileManager

  type StatefulOperator = stateful.StatefulOperator
  type StreamingSymmetricHashJoinExec = stateful.join.StreamingSymmetricHashJoinExec
  type StatefulOperatorStateInfo = stateful.StatefulOperatorStateInfo

  // The classic operators whose state reads ttlstore reads ahead (io.ttlstore.readahead.ReadAheadRule).
  type StateStoreRestoreExec = stateful.StateStoreRestoreExec
  type BaseStreamingDeduplicateExec = stateful.BaseStreamingDeduplicateExec
  type FlatMapGroupsWithStateExec = stateful.flatmapgroupswithstate.FlatMapGroupsWithStateExec

  /** The local property that carries a streaming query's id into its tasks. */
  val QueryIdKey: String = StreamExecution.QUERY_ID_KEY
}
