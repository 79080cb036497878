package io.ttlstore.checkpoint

import java.io.{Closeable, FileNotFoundException, IOException}
import java.nio.ByteBuffer
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FSDataInputStream, Path}

import io.ttlstore.spark.SparkClasses.CheckpointFileManager
import io.ttlstore.store.lazyfs.RangedReads

/**
 * Ranged reads of SST files in the checkpoint, for the lazy file system: file `i` is `files(i)` (its path and the
 * size its snapshot recorded). Each file is opened once, at its first read, and read by positioned reads, which
 * Hadoop's file systems serve concurrently on one stream (HDFS by a block read, s3a by a ranged GET). A read that
 * fails throws an IOException naming the checkpoint file and the range, which RocksDB reports as the read's error.
 */
final class CheckpointRangedReads(fm: CheckpointFileManager, files: IndexedSeq[(Path, Long)])
  extends RangedReads
  with Closeable {
  private val streams = new ConcurrentHashMap[Integer, FSDataInputStream]()

  override def read(file: Long, position: Long, into: ByteBuffer): Int = {
    val (path, size) = files(file.toInt)
    val n = math.max(0L, math.min(into.remaining().toLong, size - position)).toInt
    if (n > 0) {
      val bytes = new Array[Byte](n)
      try stream(file.toInt).readFully(position, bytes, 0, n)
      catch {
        case e: FileNotFoundException => throw new IOException(s"$path ${CheckpointRangedReads.Missing}", e)
        case NonFatal(e) => throw new IOException(s"reading $path (bytes $position to ${position + n}): $e", e)
      }
      into.put(bytes)
    }
    n
  }

  private def stream(i: Int): FSDataInputStream =
    streams.computeIfAbsent(i, _ => fm.open(files(i)._1))

  override def close(): Unit = {
    streams.values().forEach(s => scala.util.Try(s.close()))
    streams.clear()
  }
}

object CheckpointRangedReads {

  /** What a read of a file the checkpoint no longer has says after the file's path. */
  val Missing = "is missing from the checkpoint"
}
