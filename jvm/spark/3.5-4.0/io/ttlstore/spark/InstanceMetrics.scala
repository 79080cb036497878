package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state.{StateStoreCustomMetric, StateStoreId, StateStoreMetrics, StateStoreProvider}

/**
 * Spark 3.5 and 4.0 have no per-store instance metrics: a store's metrics are its operator's sums alone, and its
 * [[StoreGauge]]s are for `ttlstore inspect`.
 */
object InstanceMetrics {
  def storeMetrics(numKeys: Long, memoryBytes: Long, custom: Map[StateStoreCustomMetric, Long], id: StateStoreId,
      gauges: => Seq[(StoreGauge, Long)]): StateStoreMetrics = StateStoreMetrics(numKeys, memoryBytes, custom)

  /** What a provider mixes in to name its instance metrics on lines that have them: nothing here. */
  trait Reporting extends StateStoreProvider
}
