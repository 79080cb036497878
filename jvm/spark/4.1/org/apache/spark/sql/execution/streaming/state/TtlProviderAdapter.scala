package org.apache.spark.sql.execution.streaming.state

import io.ttlstore.spark.LineChecked

/**
 * Spark 4.1's provider API in the terms ttlstore's provider implements (Spark 4.3's): `getStore`
 * and `upgradeReadStoreToWriteStore` without `forceSnapshotOnCommit` ([[StoreOptions]]), and
 * maintenance through `doMaintenance()` alone ([[SplitMaintenance]]).
 */
abstract class TtlProviderAdapter extends LineChecked with StateStoreProvider with StoreOptions
  with FineGrainedReplay with SplitMaintenance {

  def upgradeReadStoreToWriteStore(readStore: ReadStateStore, version: Long, uniqueId: Option[String],
      forceSnapshotOnCommit: Boolean): StateStore

  override def upgradeReadStoreToWriteStore(readStore: ReadStateStore, version: Long,
      uniqueId: Option[String]): StateStore =
    upgradeReadStoreToWriteStore(readStore, version, uniqueId, forceSnapshotOnCommit = false)
}
