package org.apache.spark.sql.execution.streaming.state

/**
 * Maintenance before Spark 4.3: Spark calls `doMaintenance()` every maintenance interval, and the
 * provider's `doMaintenance()` runs both of the hooks that 4.3 calls separately.
 */
trait SplitMaintenance extends StateStoreProvider {
  def doSnapshotMaintenance(): Unit
  def doCleanupMaintenance(): Unit
}
