package io.ttlstore.store.nativelib

import org.rocksdb.RocksDB
import io.ttlstore.store.codec.TimestampedValue

/**
 * Loads `libttlstore_filter` once from inside the jar (it is built for the platform the build ran
 * on), remembers a failure, and says what it tried. RocksDB's own library must be loaded first: the
 * filter binds to it rather than loading a second copy.
 */
final class NativeFilterLoader(val resource: String) {
  private lazy val loaded: Either[String, NativeTtlFilterLib] = load()

  /** The library, or why it cannot be used (naming what was tried). */
  def library: Either[String, NativeTtlFilterLib] = loaded

  /** The library's point read, if the library loaded and binds it ([[NativeReadsLib]]). */
  lazy val reads: Option[NativeReadsLib] = loaded.toOption.flatMap { _ =>
    val r = new NativeReadsLib
    if (r.bind() == null) Some(r) else None
  }

  /** A filter with `ttlMs` and `now`, or why there is none. */
  def create(ttlMs: Long, now: Long): Either[String, TtlCompactionFilter] =
    loaded.flatMap { lib =>
      Option(lib.create(ttlMs, now, TimestampedValue.TimestampOffset)).map(h => new TtlCompactionFilter(h, lib))
        .toRight("the native filter could not be created (out of memory?)")
    }

  private def load(): Either[String, NativeTtlFilterLib] = {
    RocksDB.loadLibrary()
    try JarLibrary.extract(resource, "libttlstore_filter") match {
        case None => Left(s"no native filter for ${NativeFilter.platform} in the ttlstore jar (looked for $resource)")
        case Some(file) =>
          System.load(file.getAbsolutePath)
          val lib = new NativeTtlFilterLib
          Option(lib.bind()) match {
            case Some(problem) => Left(s"the native filter ($resource, loaded from $file) cannot bind: $problem")
            case None => Right(lib)
          }
      }
    catch {
      case e: Throwable => Left(s"loading the native filter $resource failed: $e")
    }
  }
}
