package io.ttlstore.spark

import org.apache.spark.sql.execution.SparkPlan

/** Real-Time Mode arrived in Spark 4.3: no plan of this line runs in it. */
object RealTimeMode {
  def runs(plan: SparkPlan): Boolean = false
}
