package org.apache.spark.sql.execution.streaming.state

import org.apache.hadoop.conf.Configuration

/**
 * ttlstore's bridge to Spark's state store coordinator (Spark 4.1 and later): what Spark's own
 * providers tell it after a snapshot upload (`StateStoreCoordinatorRef.snapshotUploaded`, through
 * the executor's cached `StateStoreProvider.coordinatorRef`) and after a commit
 * (`StateStore.reportCommitToCoordinator`) is private to Spark's packages, so this object, in
 * Spark's package, does only that.
 */
object CoordinatorBridge {

  /** Whether the coordinator judges snapshot upload lag (it then wants every upload reported). */
  def reportsSnapshotUploads(conf: StateStoreConf): Boolean = conf.reportSnapshotUploadLag

  /** Tells the coordinator, if this JVM reaches one, that `store` uploaded a snapshot of `version`. */
  def snapshotUploaded(store: StateStoreProviderId, version: Long, atMs: Long): Unit =
    StateStoreProvider.coordinatorRef.foreach(_.snapshotUploaded(store, version, atMs))

  /** Whether Spark validates that every store of a batch committed (it then wants each commit reported). */
  def validatesCommits(conf: StateStoreConf): Boolean = conf.commitValidationEnabled

  /** Tells the coordinator that `store` committed `version`. */
  def committed(version: Long, store: StateStoreId, hadoopConf: Configuration): Unit =
    StateStore.reportCommitToCoordinator(version, store, hadoopConf)
}
