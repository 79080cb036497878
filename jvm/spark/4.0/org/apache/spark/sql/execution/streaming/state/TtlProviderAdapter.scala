package org.apache.spark.sql.execution.streaming.state

import io.ttlstore.spark.LineChecked

/**
 * Spark 4.0's provider API in the terms ttlstore's provider implements (Spark 4.3's): `getStore`
 * without `forceSnapshotOnCommit` ([[StoreOptions]]), no `upgradeReadStoreToWriteStore` (an
 * aggregation opens its read and its write store apart), maintenance through `doMaintenance()`
 * alone ([[SplitMaintenance]]), and [[FineGrainedReplay]] without checkpoint ids.
 */
abstract class TtlProviderAdapter extends LineChecked with StateStoreProvider with StoreOptions
  with FineGrainedReplay with SplitMaintenance {

  /** Never called by Spark 4.0; the provider implements it for the later lines. */
  def upgradeReadStoreToWriteStore(readStore: ReadStateStore, version: Long, uniqueId: Option[String],
      forceSnapshotOnCommit: Boolean): StateStore
}
