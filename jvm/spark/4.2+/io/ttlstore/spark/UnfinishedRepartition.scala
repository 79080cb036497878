package io.ttlstore.spark

/**
 * Spark 4.2 and later refuse to restart a query whose last batch is an unfinished offline
 * repartition (`STREAMING_UNFINISHED_REPARTITION_DETECTED`, unless
 * `spark.sql.streaming.checkUnfinishedRepartitionOnRestart` is off), before any plan is made.
 */
object UnfinishedRepartition {
  val checkedBySpark: Boolean = true
}
