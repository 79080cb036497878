package io.ttlstore.spark

/** From Spark 4.1 a streaming global limit runs in checkpoint format v2 (Spark 4.0's driver fails it). */
object GlobalLimitInFormatV2 {
  val runs: Boolean = true
}
