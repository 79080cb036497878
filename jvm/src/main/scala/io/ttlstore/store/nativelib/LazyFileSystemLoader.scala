package io.ttlstore.store.nativelib

import org.apache.spark.internal.Logging

import io.ttlstore.config.{NativeMode, TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.store.lazyfs.LazyFileSystem

/**
 * Loads `libttlstore_lazy_fs` (the lazy file system, jvm/src/main/cpp) once per class loader from inside the jar,
 * remembers a failure, and says what it tried. It binds to the librocksdbjni the JVM has: the native filter's
 * library, loaded first, makes that copy's symbols global ([[LazyFileSystem.load]]).
 */
object LazyFileSystemLoader extends Logging {
  val LibraryName = "libttlstore_lazy_fs.so"

  def resourcePath: String = s"/io/ttlstore/native/${NativeFilter.platform}/$LibraryName"

  private lazy val loaded: Either[String, String] = load()

  /** The path of the librocksdbjni the library binds to, or why it cannot be used (naming what was tried). */
  def library: Either[String, String] = loaded

  private val warned = new java.util.concurrent.atomic.AtomicBoolean()

  /**
   * Whether `store`, with `settings`, opens before its SST files are local: never with `false`; with `true` a library
   * that cannot load fails the store naming the setting; with `auto` it logs one warning per JVM and the store
   * fetches every file first.
   */
  def wanted(settings: TtlStoreSettings, store: String): Boolean = settings.lazyLoad match {
    case NativeMode.Off => false
    case mode =>
      library match {
        case Right(_) => true
        case Left(problem) if mode == NativeMode.On =>
          val key = TtlStoreConfig.LazyLoadEnabled.key
          throw TtlStoreErrors.lazyLoadUnavailable(store, s"$key=true", problem,
            s"$key=auto to fetch every file before opening")
        case Left(problem) =>
          if (warned.compareAndSet(false, true)) {
            logWarning(s"ttlstore's lazy file system is not available ($problem); stores fetch every SST file " +
              s"before they open. Set ${TtlStoreConfig.LazyLoadEnabled.key}=false to silence this.")
          }
          false
      }
  }

  /**
   * Whether `store` keeps its SST files remote behind a bounded local cache (`remote.localCacheMB`): a library that
   * cannot load then fails the store naming the setting.
   */
  def remoteWanted(settings: TtlStoreSettings, store: String): Boolean =
    settings.remoteCacheMb > 0 && (library match {
      case Right(_) => true
      case Left(problem) =>
        val key = TtlStoreConfig.RemoteCacheMb.key
        throw TtlStoreErrors.lazyLoadUnavailable(store, s"$key=${settings.remoteCacheMb}", problem,
          s"$key=0 to keep every file local")
    })

  private def load(): Either[String, String] =
    NativeFilter.library.left
      .map(problem => s"it needs ttlstore's native library, which is not available: $problem")
      .flatMap { _ =>
        try JarLibrary.extract(resourcePath, "libttlstore_lazy_fs") match {
            case None =>
              Left(s"no lazy file system for ${NativeFilter.platform} in the ttlstore jar (looked for $resourcePath)")
            case Some(file) => Right(LazyFileSystem.load(file.getAbsolutePath))
          }
        catch {
          case e: Throwable => Left(s"loading the lazy file system $resourcePath failed: $e")
        }
      }
}
