package io.ttlstore.store.local

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.streaming.state.{CoordinatorBridge, StateStoreConf, StateStoreId, StateStoreProviderId}

/**
 * Tells Spark's state store coordinator that a store uploaded a snapshot, as Spark's own providers
 * do after each upload (`reportSnapshotUploadToCoordinator` in 4.3's HDFS provider): the
 * coordinator logs `Snapshot Lag Detected` for every store of a query run that has not reported an
 * upload for a while (`spark.sql.streaming.stateStore.coordinatorReportSnapshotUploadLag`).
 * Reported with the wall clock, which the coordinator judges lag by.
 */
private[ttlstore] final class SnapshotUploadReport(providerId: Option[StateStoreProviderId], enabled: Boolean) {
  def uploaded(version: Long): Unit = if (enabled) providerId.foreach { id =>
    CoordinatorBridge.snapshotUploaded(id, version, System.currentTimeMillis())
  }
}

private[ttlstore] object SnapshotUploadReport {

  /** The report of one store of the query run that `hadoopConf` names (none outside a query run). */
  def apply(storeId: StateStoreId, storeConf: StateStoreConf, hadoopConf: Configuration): SnapshotUploadReport =
    new SnapshotUploadReport(CoordinatorBridge.providerId(storeId, hadoopConf),
      CoordinatorBridge.reportsSnapshotUploads(storeConf))
}
