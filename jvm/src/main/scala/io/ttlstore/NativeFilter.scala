package io.ttlstore

import java.io.File
import java.nio.file.{Files, StandardCopyOption}
import java.util.Locale

import org.rocksdb.{AbstractCompactionFilter, RocksDB, Slice}

/** The JNI entry points of `libttlstore_filter` (jvm/src/main/c/ttl_filter_jni.c). */
private[ttlstore] final class NativeTtlFilterLib {
  /** Binds to the librocksdbjni already loaded; null, or what is missing. */
  @native def bind(): String
  /** A new filter and its state: `Array(filterHandle, stateHandle)`; null if it cannot be made. */
  @native def create(ttlMs: Long, now: Long, timestampOffset: Int): Array[Long]
  @native def setNow(state: Long, now: Long): Unit
  @native def setTtl(state: Long, ttlMs: Long): Unit
  @native def removed(state: Long): Long
}

/**
 * A native TTL compaction filter for one column family: RocksDB removes, while compacting, the
 * values that `ttl_should_remove` (the JVM's expiry rule) says are expired at the pushed "now".
 * RocksJava deletes the native filter, and with it the state, when this object is closed: close it
 * only after the DB that uses it.
 */
final class TtlCompactionFilter private[ttlstore] (handles: Array[Long], lib: NativeTtlFilterLib)
    extends AbstractCompactionFilter[Slice](handles(0)) {
  private val state = handles(1)

  /** The time compactions judge expiry by from now on (processing time, or stream time). */
  def setNow(now: Long): Unit = synchronized { if (isOwningHandle) lib.setNow(state, now) }

  /** The TTL compactions judge expiry by from now on; 0 removes nothing. */
  def setTtl(ttlMs: Long): Unit = synchronized { if (isOwningHandle) lib.setTtl(state, ttlMs) }

  /** Rows this filter has removed so far. */
  def removedRows: Long = synchronized { if (isOwningHandle) lib.removed(state) else 0L }

  override def close(): Unit = synchronized { super.close() }
}

/**
 * Loads `libttlstore_filter` once from inside the jar (it is built for the platform the build ran
 * on), remembers a failure, and says what it tried. RocksDB's own library must be loaded first: the
 * filter binds to it rather than loading a second copy.
 */
final class NativeFilterLoader(val resource: String) {
  private lazy val loaded: Either[String, NativeTtlFilterLib] = load()

  /** The library, or why it cannot be used (naming what was tried). */
  def library: Either[String, NativeTtlFilterLib] = loaded

  /** A filter with `ttlMs` and `now`, or why there is none. */
  def create(ttlMs: Long, now: Long): Either[String, TtlCompactionFilter] =
    loaded.flatMap { lib =>
      Option(lib.create(ttlMs, now, TimestampedValue.TimestampOffset)).map(h => new TtlCompactionFilter(h, lib))
        .toRight("the native filter could not be created (out of memory?)")
    }

  private def load(): Either[String, NativeTtlFilterLib] = {
    RocksDB.loadLibrary()
    Option(getClass.getResourceAsStream(resource)) match {
      case None => Left(s"no native filter for ${NativeFilter.platform} in the ttlstore jar (looked for $resource)")
      case Some(in) =>
        try {
          val file = File.createTempFile("libttlstore_filter-", ".so")
          file.deleteOnExit()
          try Files.copy(in, file.toPath, StandardCopyOption.REPLACE_EXISTING) finally in.close()
          System.load(file.getAbsolutePath)
          val lib = new NativeTtlFilterLib
          Option(lib.bind()) match {
            case Some(problem) => Left(s"the native filter ($resource, loaded from $file) cannot bind: $problem")
            case None => Right(lib)
          }
        } catch {
          case e: Throwable => Left(s"loading the native filter $resource failed: $e")
        }
    }
  }
}

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

/** The filter library of this JVM, and the per-store decision whether to use it. */
object NativeFilter extends org.apache.spark.internal.Logging {
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
    if (!settings.ttl.enabled || settings.nativeFilter == NativeFilterMode.Off) None
    else {
      val l = loader(settings.testingNativeFilterResource.getOrElse(resourcePath))
      l.library match {
        case Right(_) => Some(l)
        case Left(problem) if settings.nativeFilter == NativeFilterMode.On =>
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
