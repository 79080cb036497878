package io.ttlstore.errors

import java.io.IOException

import org.rocksdb.{RocksDBException, Status}

/**
 * A full disk, told apart from other failures: RocksDB's `IOError` with the `NoSpace` sub-code (a
 * flush, a compaction, a local checkpoint, the files of an open; once a background flush failed so,
 * every later write fails with that status), or the operating system's ENOSPC through Java's I/O (a
 * snapshot's download). A full disk is no damage: a reader that meets one while writing what it reads
 * to local disk lets it through instead of calling the file corrupted, and a load is not repaired
 * around it. Where a store's working copy is concerned, `store.LocalDiskFull` names the directory.
 */
object DiskFull {

  /** ENOSPC's text in Linux's and macOS's `strerror`, which Java's I/O and RocksDB's status both carry. */
  private val NoSpace = "No space left on device"

  val ErrorName = "LOCAL_DISK_FULL"

  /** True if `failure` or one of its causes is a full disk. */
  def in(failure: Throwable): Boolean =
    Iterator.iterate(failure)(_.getCause).takeWhile(_ != null).take(16).exists {
      case e: TtlStoreException => e.errorName == ErrorName
      case e: RocksDBException =>
        Option(e.getStatus).exists(_.getSubCode == Status.SubCode.NoSpace) || mentions(e)
      case e: IOException => mentions(e)
      case _ => false
    }

  private def mentions(e: Throwable): Boolean = Option(e.getMessage).exists(_.contains(NoSpace))
}
