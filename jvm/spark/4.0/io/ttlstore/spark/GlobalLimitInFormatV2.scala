package io.ttlstore.spark

/**
 * Spark 4.0 cannot run a streaming global limit in checkpoint format v2: after each batch its
 * driver asserts one checkpoint id per shuffle partition, and a global limit's state has one
 * partition ("ChekpointInfo length: 1, numPartitions: 2"), whichever the provider. ttlstore's query
 * check refuses such a query by name before its first task.
 */
object GlobalLimitInFormatV2 {
  val runs: Boolean = false
}
