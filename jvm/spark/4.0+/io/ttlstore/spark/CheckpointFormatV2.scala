package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state.StateStoreConf

/** Checkpoint format v2 (`spark.sql.streaming.stateStore.checkpointFormatVersion=2`), which Spark 4.0 brought. */
object CheckpointFormatV2 {

  /** Whether the query runs in format v2: its state versions then carry checkpoint ids. */
  def enabled(conf: StateStoreConf): Boolean = conf.enableStateStoreCheckpointIds
}
