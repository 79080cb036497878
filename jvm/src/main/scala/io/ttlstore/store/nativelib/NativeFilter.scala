package io.ttlstore.store.nativelib

import java.util.Locale

import org.apache.spark.internal.Logging

import io.ttlstore.config.{NativeMode, TtlStoreSettings}
import io.ttlstore.errors.TtlStoreErrors

/** The filter library of this JVM, and the per-store decision whether to use it. */
object NativeFilter extends Logging {
  val LibraryName = "libttlstore_filter.so"

  /** `linux-x86_64`, `linux-aarch64`, ...: the folder of the jar the library is packed in. */
  def platform: String = {
    val os = System.getProperty("os.name").toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "")
    val arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT) match {
      case "amd64" | "x86_64" => "x86_64"
      case "arm64" | "aarch64" => "aarch64"
      case other => other
    }
    s"$os-$arch"
  }

  def resourcePath: String = s"/io/ttlstore/native/$platform/$LibraryName"

  private val loaders = new java.util.concurrent.ConcurrentHashMap[String, NativeFilterLoader]()
  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /** The loader of `resource` (this platform's library unless a test names another), one per JVM. */
  def loader(resource: String = resourcePath): NativeFilterLoader =
    loaders.computeIfAbsent(resource, r => new NativeFilterLoader(r))

  def library: Either[String, NativeTtlFilterLib] = loader().library

  def create(ttlMs: Long, now: Long): Either[String, TtlCompactionFilter] = loader().create(ttlMs, now)

  /**
   * Whether a store with `settings` uses the native filter: only with TTL on, never with `false`;
   * with `true` a library that cannot load fails the store naming `modeKey`; with `auto` it logs one
   * warning per JVM and the store relies on the JVM sweep.
   */
  def wanted(settings: TtlStoreSettings, modeKey: String, store: String): Option[NativeFilterLoader] =
    if (!settings.ttl.enabled || settings.nativeFilter == NativeMode.Off) None
    else {
      val l = loader(settings.hooks.nativeFilterResource.getOrElse(resourcePath))
      l.library match {
        case Right(_) => Some(l)
        case Left(problem) if settings.nativeFilter == NativeMode.On =>
          throw TtlStoreErrors.nativeFilterUnavailable(store, modeKey, problem)
        case Left(problem) =>
          if (warned.add(l.resource)) {
            logWarning(s"ttlstore's native TTL compaction filter is not available ($problem); expired " +
              s"rows are removed by the JVM sweep instead. Set $modeKey=false to silence this, or " +
              "true to make it an error.")
          }
          None
      }
    }
}
