package org.apache.spark.sql.execution.streaming.state

import io.ttlstore.spark.LineChecked

/**
 * Spark 4.2's provider API in the terms ttlstore's provider implements (Spark 4.3's): as 4.3's, but
 * maintenance calls `doMaintenance()` alone ([[SplitMaintenance]]).
 */
abstract class TtlProviderAdapter extends LineChecked with StateStoreProvider with FineGrainedReplay
  with SplitMaintenance
