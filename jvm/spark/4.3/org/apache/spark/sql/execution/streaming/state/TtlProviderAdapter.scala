package org.apache.spark.sql.execution.streaming.state

import io.ttlstore.spark.LineChecked

/**
 * Spark 4.3's provider API, which is the one ttlstore's provider implements: `getStore` with
 * `forceSnapshotOnCommit` and `loadEmpty`, `upgradeReadStoreToWriteStore` with
 * `forceSnapshotOnCommit`, the split maintenance hooks (`doSnapshotMaintenance`,
 * `doCleanupMaintenance`) and [[FineGrainedReplay]]. Every line's adapter offers these same
 * members, so the provider is one source; [[LineChecked]] refuses a Spark of another line before any
 * of Spark's traits initialize.
 */
abstract class TtlProviderAdapter extends LineChecked with StateStoreProvider with FineGrainedReplay
