package io.ttlstore.checkpoint

import java.io.{FilterInputStream, InputStream, IOException}

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.ttlstore.errors.{FileSystemFailure, StorageErrors}
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * Opens a file of the checkpoint for reading so that a failure of the file system to serve it (a
 * connection reset mid-download, a timeout, throttling past the client's retries: [[FileSystemFailure]])
 * fails as `CHECKPOINT_READ_FAILED` naming the file, at the open or at any read, and never reaches a
 * parser that would take it for damage. A missing file still opens as `FileNotFoundException`.
 */
object CheckpointReads {

  def open(fm: CheckpointFileManager, path: Path): InputStream = {
    val in =
      try fm.open(path)
      catch {
        case NonFatal(e) if FileSystemFailure.in(e) => throw StorageErrors.checkpointReadFailed(path.toString, e)
      }
    new Named(path, in)
  }

  private final class Named(path: Path, in: InputStream) extends FilterInputStream(in) {
    private def named[T](body: => T): T =
      try body
      catch {
        case e: IOException if FileSystemFailure.in(e) => throw StorageErrors.checkpointReadFailed(path.toString, e)
      }

    override def read(): Int = named(in.read())
    override def read(b: Array[Byte], off: Int, len: Int): Int = named(in.read(b, off, len))
    override def skip(n: Long): Long = named(in.skip(n))
    override def available(): Int = named(in.available())
  }
}
