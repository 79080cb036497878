package io.ttlstore.config

import io.ttlstore.ttl.Named

/**
 * Whether stores use an optional native part of ttlstore, which may not load on every platform:
 * `nativeFilter.enabled` (the native compaction filter) and `lazyLoad.enabled` (the lazy file system).
 */
sealed abstract class NativeMode(val name: String) extends Named
object NativeMode {

  /** Use it when it loads; otherwise warn once per JVM and do without it. */
  case object Auto extends NativeMode("auto")

  /** Use it; a store fails to start when it cannot load. */
  case object On extends NativeMode("true")

  /** Never use it. */
  case object Off extends NativeMode("false")
  val all: Seq[NativeMode] = Seq(Auto, On, Off)
}
