package io.ttlstore.store.nativelib

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

/** A native library packed in the jar, copied out to a file of its own that the JVM can load. */
private[nativelib] object JarLibrary {

  /**
   * `resource` (a path in the jar) copied to a new temporary file named after `name`, deleted when the JVM exits;
   * None when the jar has no such resource. A file per call: a library loaded by two class loaders (sessions of
   * Spark Connect, jars added twice) must be two files, since the JVM binds a loaded library to one class loader.
   */
  def extract(resource: String, name: String): Option[File] =
    Option(getClass.getResourceAsStream(resource)).map { in =>
      try {
        val file = File.createTempFile(s"$name-", ".so")
        file.deleteOnExit()
        Files.copy(in, file.toPath, StandardCopyOption.REPLACE_EXISTING)
        file
      } finally in.close()
    }
}
