package io.ttlstore.store.rocksdb

import java.io.File

import scala.util.control.NonFatal

import io.ttlstore.errors.{DiskFull, StorageErrors, TtlStoreException}

/** A full disk under a store's working copy, named: the local directory, what failed there, the space left. */
object LocalDiskFull {

  /**
   * `body`; a full disk it fails on ([[DiskFull]]) is rethrown as `LOCAL_DISK_FULL`, naming the local
   * directory that holds `dir`, what `store` was doing there, and the space left on it.
   */
  def named[T](store: String, dir: File, operation: String)(body: => T): T =
    try body
    catch {
      case e: TtlStoreException if e.errorName == DiskFull.ErrorName => throw e
      case NonFatal(e) if DiskFull.in(e) => throw error(store, dir, operation, e)
    }

  /** `LOCAL_DISK_FULL` for `store`, which could not `operation` in `dir`, inside its working copy. */
  def error(store: String, dir: File, operation: String, cause: Throwable): TtlStoreException = {
    val copy = LocalWorkDirs.workingCopyOf(dir).getOrElse(dir)
    val root = Option(copy.getAbsoluteFile.getParentFile).getOrElse(copy)
    val room = Iterator.iterate(root)(_.getParentFile).takeWhile(_ != null).find(_.exists)
      .map(d => s"${d.getUsableSpace >> 20} MiB free of ${d.getTotalSpace >> 20} MiB")
    StorageErrors.localDiskFull(store, root, copy, operation, room.getOrElse("its free space unknown"), cause)
  }
}
