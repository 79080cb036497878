package org.apache.spark.sql.execution.streaming.state

import org.apache.hadoop.conf.Configuration

/**
 * ttlstore's bridge to Spark's state store coordinator on Spark 3.5 and 4.0, whose coordinator
 * neither judges snapshot upload lag nor validates commits (both arrived in 4.1): nothing to report.
 */
object CoordinatorBridge {
  def providerId(store: StateStoreId, hadoopConf: Configuration): Option[StateStoreProviderId] = None
  def reportsSnapshotUploads(conf: StateStoreConf): Boolean = false
  def snapshotUploaded(store: StateStoreProviderId, version: Long, atMs: Long): Unit = ()
  def validatesCommits(conf: StateStoreConf): Boolean = false
  def committed(version: Long, store: StateStoreId, hadoopConf: Configuration): Unit = ()
}
