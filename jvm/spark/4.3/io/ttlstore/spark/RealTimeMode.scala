package io.ttlstore.spark

import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.v2.RealTimeStreamScanExec

/** Spark 4.3's Real-Time Mode (`trigger(realTime=...)`), which Spark runs only on its own RocksDB provider. */
object RealTimeMode {

  /** Whether `plan` is a batch of a query in Real-Time Mode. */
  def runs(plan: SparkPlan): Boolean = plan.exists(_.isInstanceOf[RealTimeStreamScanExec])
}
