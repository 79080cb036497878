package io.ttlstore.errors

import java.io.InterruptedIOException
import java.net.{SocketException, UnknownHostException}

/**
 * A file system that failed to deliver or take bytes, told apart from a file whose bytes are damaged:
 * a connection reset or refused, a timeout, an unknown host, or an object store's client reporting a
 * failed request (throttling, an error status, a broken transfer) once its retries ran out. A reader
 * that meets one names the file as unreadable for now (`CHECKPOINT_READ_FAILED`), never as corrupted:
 * nothing is known to be wrong with the file, and the batch runs again once the store answers.
 */
object FileSystemFailure {

  val ErrorName = "CHECKPOINT_READ_FAILED"

  /** Packages of the clients whose exceptions report a request that failed, not a file's content. */
  private val ClientPackages =
    Seq("org.apache.hadoop.fs.s3a.", "software.amazon.awssdk.", "com.amazonaws.", "org.apache.http.")

  /** True if `failure` or one of its causes is a failure of the file system to serve a request. */
  def in(failure: Throwable): Boolean =
    Iterator.iterate(failure)(_.getCause).takeWhile(_ != null).take(16).exists {
      case e: TtlStoreException => e.errorName == ErrorName
      case _: SocketException | _: UnknownHostException | _: InterruptedIOException => true
      case e => ClientPackages.exists(e.getClass.getName.startsWith)
    }
}
