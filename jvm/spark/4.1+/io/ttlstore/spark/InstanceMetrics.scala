package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state._

/**
 * Spark 4.1 and later report a store's [[StoreGauge]]s per partition, as instance metrics; each line's progress
 * carries the worst `numStateStoreInstanceMetricsToReport` partitions of each. Spark 4.3 gathers them in one
 * accumulator, so it reports all five. Spark 4.1 and 4.2 make one SQL metric per gauge, partition and store that
 * every task carries and reports (at 200 partitions, five gauges cost a deduplication half its CPU again): there
 * ttlstore reports the snapshot version alone, as Spark's own providers do, and the other figures as the
 * operator's sums.
 */
object InstanceMetrics {

  /** The gauges this line reports per store. */
  val reported: Seq[StoreGauge] =
    if (LineCapabilities.instanceMetrics == "accumulator") StoreGauge.all else Seq(StoreGauge.SnapshotLastUploaded)

  def storeMetrics(numKeys: Long, memoryBytes: Long, custom: Map[StateStoreCustomMetric, Long], id: StateStoreId,
      gauges: => Seq[(StoreGauge, Long)]): StateStoreMetrics =
    StateStoreMetrics(numKeys, memoryBytes, custom,
      gauges.collect {
        case (g, v) if reported.contains(g) =>
          (GaugeInstanceMetric(g, Some(id.partitionId), id.storeName): StateStoreInstanceMetric) -> v
      }.toMap)

  /** What a provider mixes in to name its instance metrics: Spark's driver makes one of each per partition. */
  trait Reporting extends StateStoreProvider {
    override def supportedInstanceMetrics: Seq[StateStoreInstanceMetric] =
      reported.map(GaugeInstanceMetric(_, None, StateStoreId.DEFAULT_STORE_NAME))
  }
}
