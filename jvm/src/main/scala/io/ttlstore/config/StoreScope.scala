package io.ttlstore.config

/** Which store a setting is resolved for: Spark's operator id and store name. */
final case class StoreScope(operatorId: Long, storeName: String)

object StoreScope {
  val Default: StoreScope = StoreScope(0L, "default")
}
