package org.apache.spark.sql.execution.streaming.state

/**
 * `getStore` before Spark 4.2, which added `forceSnapshotOnCommit` and `loadEmpty` (for offline
 * repartition): Spark's two-argument form opens the store as 4.2's does with both false.
 */
trait StoreOptions extends StateStoreProvider {

  def getStore(version: Long, stateStoreCkptId: Option[String], forceSnapshotOnCommit: Boolean,
      loadEmpty: Boolean): StateStore

  override def getStore(version: Long, stateStoreCkptId: Option[String]): StateStore =
    getStore(version, stateStoreCkptId, forceSnapshotOnCommit = false, loadEmpty = false)
}
