package org.apache.spark.sql.execution.streaming.state

import java.util.UUID

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.streaming.runtime.StreamExecution

/**
 * ttlstore's bridge to Spark's state store coordinator (Spark 4.1 and later): what Spark's own
 * providers tell it after a snapshot upload (`StateStoreCoordinatorRef.snapshotUploaded`, through
 * the executor's cached `StateStoreProvider.coordinatorRef`) and after a commit
 * (`StateStore.reportCommitToCoordinator`) is private to Spark's packages, so this object, in
 * Spark's package, does only that.
 */
object CoordinatorBridge {

  /** The store of the query run `hadoopConf` names, as the coordinator knows it (none outside a query run). */
  def providerId(store: StateStoreId, hadoopConf: Configuration): Option[StateStoreProviderId] =
    Option(hadoopConf.get(StreamExecution.RUN_ID_KEY)).flatMap(s => Try(UUID.fromString(s)).toOption)
      .map(StateStoreProviderId(store, _))

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
