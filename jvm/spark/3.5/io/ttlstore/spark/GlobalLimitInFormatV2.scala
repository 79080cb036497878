package io.ttlstore.spark

/** Spark 3.5 has no checkpoint format v2 ([[CheckpointFormatV2]]): nothing for a global limit to fail on. */
object GlobalLimitInFormatV2 {
  val runs: Boolean = true
}
