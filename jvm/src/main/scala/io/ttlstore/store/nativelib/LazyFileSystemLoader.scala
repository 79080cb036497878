package io.ttlstore.store.nativelib

import io.ttlstore.store.lazyfs.LazyFileSystem

/**
 * Loads `libttlstore_lazy_fs` (the lazy file system, jvm/src/main/cpp) once per class loader from inside the jar,
 * remembers a failure, and says what it tried. It binds to the librocksdbjni the JVM has: the native filter's
 * library, loaded first, makes that copy's symbols global ([[LazyFileSystem.load]]).
 */
object LazyFileSystemLoader {
  val LibraryName = "libttlstore_lazy_fs.so"

  def resourcePath: String = s"/io/ttlstore/native/${NativeFilter.platform}/$LibraryName"

  private lazy val loaded: Either[String, String] = load()

  /** The path of the librocksdbjni the library binds to, or why it cannot be used (naming what was tried). */
  def library: Either[String, String] = loaded

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
