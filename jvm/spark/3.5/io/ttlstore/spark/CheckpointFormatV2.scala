package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state.StateStoreConf

/**
 * Spark 3.5 has no checkpoint format v2 (4.0 brought it): state versions carry no checkpoint ids,
 * and ttlstore refuses `checkpointFormatVersion=2` by name, as 3.5 would ignore it silently.
 */
object CheckpointFormatV2 {
  def enabled(conf: StateStoreConf): Boolean = false
}
