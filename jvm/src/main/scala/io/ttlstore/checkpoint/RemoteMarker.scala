package io.ttlstore.checkpoint

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import io.ttlstore.store.lazyfs.LazyFileSystem

/**
 * What a local checkpoint of a DB in remote mode (`remote.localCacheMB`) holds in place of an SST file that is not on
 * local disk: the lazy file system writes it when RocksDB links the file (jvm/src/main/cpp/lazy_file_system.h), and
 * the snapshot's upload references the checkpoint's copy instead of uploading it.
 */
object RemoteMarker {
  private val bytes = LazyFileSystem.REMOTE_MARKER.getBytes(StandardCharsets.UTF_8)

  /** Whether `f` is a marker (no SST file is this small). */
  def marks(f: File): Boolean =
    f.length() == bytes.length && java.util.Arrays.equals(Files.readAllBytes(f.toPath), bytes)

  /** The upload of a snapshot whose remote file `name` (the checkpoint's `copy`, if it knows one) is gone. */
  def notInCheckpoint(name: String, copy: Option[String]): IllegalStateException =
    new IllegalStateException(copy match {
      case Some(path) =>
        s"the snapshot needs $path (its local $name is kept remote), which the checkpoint no longer has"
      case None => s"the snapshot's $name is kept remote, but the checkpoint holds no copy of it for this DB"
    })
}
