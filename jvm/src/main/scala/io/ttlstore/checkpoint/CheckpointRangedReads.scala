package io.ttlstore.checkpoint

import java.io.{Closeable, FileNotFoundException, IOException}
import java.nio.ByteBuffer
import java.util.concurrent.{Callable, ConcurrentHashMap, ExecutionException, Executors, TimeUnit, TimeoutException}
import java.util.concurrent.atomic.{AtomicInteger, LongAdder}

import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FSDataInputStream, Path}

import io.ttlstore.spark.SparkClasses.CheckpointFileManager
import io.ttlstore.store.lazyfs.RangedReads
import io.ttlstore.threads.DaemonThreads

/**
 * Ranged reads of SST files in the checkpoint, for the lazy file system: file `i` is `initial(i)` (its path and the
 * size its snapshot recorded), or one [[add]] numbered later (until [[remove]]d). Each file is opened once, at its
 * first read, and read by positioned reads, which Hadoop's file systems serve concurrently on one stream (HDFS by a
 * block read, s3a by a ranged GET). A read that
 * fails throws an IOException naming the checkpoint file and the range, which RocksDB reports as the read's error;
 * so does one the file system has not answered within `timeoutMs` (0: no bound), whose stream is then dropped.
 * [[served]] counts the reads answered and their bytes.
 */
final class CheckpointRangedReads(fm: CheckpointFileManager, initial: IndexedSeq[(Path, Long)], timeoutMs: Long = 0L)
  extends RangedReads
  with Closeable {
  private val streams = new ConcurrentHashMap[Integer, FSDataInputStream]()
  private val files = new ConcurrentHashMap[Integer, (Path, Long)]()
  private val numbered = new AtomicInteger()
  private val (reads, bytesRead) = (new LongAdder, new LongAdder)
  initial.foreach(add)

  /** The reads answered so far, and their bytes. */
  def served: CheckpointRangedReads.Served = CheckpointRangedReads.Served(reads.sum(), bytesRead.sum())

  /** Numbers the checkpoint file `file` (its path and size) for reads. */
  def add(file: (Path, Long)): Long = {
    val i = numbered.getAndIncrement()
    files.put(i, file)
    i.toLong
  }

  /** Forgets file `file` and closes its stream: nothing reads it any more (RocksDB deleted the file). */
  def remove(file: Long): Unit = {
    files.remove(file.toInt)
    Option(streams.remove(file.toInt)).foreach(s => scala.util.Try(s.close()))
  }

  override def read(file: Long, position: Long, into: ByteBuffer): Int = {
    val (path, size) = files.get(file.toInt)
    val n = math.max(0L, math.min(into.remaining().toLong, size - position)).toInt
    if (n > 0) {
      val bytes = new Array[Byte](n)
      val range = s"$path (bytes $position to ${position + n})"
      try bounded(file.toInt, range)(stream(file.toInt).readFully(position, bytes, 0, n))
      catch {
        case e: FileNotFoundException => throw new IOException(s"$path ${CheckpointRangedReads.Missing}", e)
        case e: IOException if e.getMessage != null && e.getMessage.startsWith(CheckpointRangedReads.NoAnswer) =>
          throw e
        case NonFatal(e) => throw new IOException(s"reading $range: $e", e)
      }
      into.put(bytes)
      reads.increment()
      bytesRead.add(n.toLong)
    }
    n
  }

  /** `read` in this thread, or with a bound in a thread of [[CheckpointRangedReads.readers]]. */
  private def bounded(i: Int, range: String)(read: => Unit): Unit =
    if (timeoutMs <= 0) read
    else {
      val future = CheckpointRangedReads.readers.submit(new Callable[Unit] { def call(): Unit = read })
      try future.get(timeoutMs, TimeUnit.MILLISECONDS)
      catch {
        case e: ExecutionException => throw e.getCause
        case _: TimeoutException =>
          future.cancel(true)
          Option(streams.remove(i)).foreach(s => scala.util.Try(s.close()))
          throw new IOException(s"${CheckpointRangedReads.NoAnswer} within $timeoutMs ms reading $range")
        case e: InterruptedException =>
          future.cancel(true)
          Thread.currentThread().interrupt()
          throw new IOException(s"interrupted reading $range", e)
      }
    }

  private def stream(i: Int): FSDataInputStream =
    streams.computeIfAbsent(i, _ => fm.open(files.get(i)._1))

  override def close(): Unit = {
    streams.values().forEach(s => scala.util.Try(s.close()))
    streams.clear()
  }
}

object CheckpointRangedReads {

  /** Reads the checkpoint answered, and their bytes. */
  final case class Served(reads: Long, bytes: Long) {
    def -(earlier: Served): Served = Served(reads - earlier.reads, bytes - earlier.bytes)
  }

  object Served {
    val Zero: Served = Served(0L, 0L)
  }

  /** What a read of a file the checkpoint no longer has says after the file's path. */
  val Missing = "is missing from the checkpoint"

  /** How a read the file system did not answer in time starts. */
  val NoAnswer = "no answer from the checkpoint's file system"

  /** The threads bounded reads run in (daemons, as many as reads wait at once; idle ones end after a minute). */
  private lazy val readers = Executors.newCachedThreadPool(DaemonThreads.factory("ranged-read"))
}
