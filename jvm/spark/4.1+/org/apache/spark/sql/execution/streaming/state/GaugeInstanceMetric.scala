package org.apache.spark.sql.execution.streaming.state

import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import io.ttlstore.spark.StoreGauge

/**
 * A [[StoreGauge]] of one store (`partitionId`, `storeName`) as Spark's instance metric: -1 until the store reports
 * it, and the latest value a store reports stands (a gauge, not a sum). Spark's driver makes one per partition from
 * the provider's `supportedInstanceMetrics` (`withNewId`) and finds the store's by equality.
 */
final case class GaugeInstanceMetric(gauge: StoreGauge, partitionId: Option[Int], storeName: String)
  extends StateStoreInstanceMetric {
  override def metricPrefix: String = gauge.name
  override def descPrefix: String = gauge.description
  override def initValue: Long = -1L

  override def createSQLMetric(sparkContext: SparkContext): SQLMetric = gauge.kind match {
    case StoreGauge.Size => SQLMetrics.createSizeMetric(sparkContext, desc, initValue)
    case StoreGauge.Duration => SQLMetrics.createTimingMetric(sparkContext, desc, initValue)
    case StoreGauge.Count =>
      val metric = new SQLMetric("sum", initValue)
      metric.register(sparkContext, Some(desc), countFailedValues = false)
      metric
  }

  override def ordering: Ordering[Long] = if (gauge.worstIsLowest) Ordering.Long else Ordering.Long.reverse
  override def ignoreIfUnchanged: Boolean = false
  override def combine(metric: SQLMetric, value: Long): Long = value
  override def withNewId(partitionId: Int, storeName: String): GaugeInstanceMetric =
    copy(partitionId = Some(partitionId), storeName = storeName)
}
