package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state._

/**
 * Spark 4.1 and later report a store's [[StoreGauge]]s per partition, as instance metrics: 4.1 and 4.2 keep one
 * SQL metric per partition and gauge (the SQL tab shows them), 4.3 gathers them in one accumulator; each line's
 * progress carries the worst `numStateStoreInstanceMetricsToReport` partitions of each.
 */
object InstanceMetrics {
  def storeMetrics(numKeys: Long, memoryBytes: Long, custom: Map[StateStoreCustomMetric, Long], id: StateStoreId,
      gauges: => Seq[(StoreGauge, Long)]): StateStoreMetrics =
    StateStoreMetrics(numKeys, memoryBytes, custom,
      gauges.map { case (g, v) =>
        (GaugeInstanceMetric(g, Some(id.partitionId), id.storeName): StateStoreInstanceMetric) -> v
      }.toMap)

  /** What a provider mixes in to name its instance metrics: Spark's driver makes one of each per partition. */
  trait Reporting extends StateStoreProvider {
    override def supportedInstanceMetrics: Seq[StateStoreInstanceMetric] =
      StoreGauge.all.map(GaugeInstanceMetric(_, None, StateStoreId.DEFAULT_STORE_NAME))
  }
}
