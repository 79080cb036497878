package io.ttlstore.config

import io.ttlstore.ttl.Named

/** `nativeFilter.enabled`: whether stores with TTL get the native compaction filter. */
sealed abstract class NativeFilterMode(val name: String) extends Named
object NativeFilterMode {

  /** Use it when it loads; otherwise warn once per JVM and rely on the JVM sweep. */
  case object Auto extends NativeFilterMode("auto")

  /** Use it; a store fails to start when it cannot load. */
  case object On extends NativeFilterMode("true")

  /** Never use it: expired rows are removed by the JVM sweep only. */
  case object Off extends NativeFilterMode("false")
  val all: Seq[NativeFilterMode] = Seq(Auto, On, Off)
}
