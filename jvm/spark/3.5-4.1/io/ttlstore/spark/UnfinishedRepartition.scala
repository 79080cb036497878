package io.ttlstore.spark

/**
 * Spark before 4.2 does not look for an unfinished offline repartition when a query restarts (4.2
 * added the check and `STREAMING_UNFINISHED_REPARTITION_DETECTED`): ttlstore's query check does.
 */
object UnfinishedRepartition {
  val checkedBySpark: Boolean = false
}
