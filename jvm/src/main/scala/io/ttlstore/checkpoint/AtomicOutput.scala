package io.ttlstore.checkpoint

import java.io.{FilterOutputStream, OutputStream}

import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * An atomically created file: visible under its name only once the stream is closed; `cancel`
 * makes sure it never is.
 */
final class AtomicOutput private (underlying: OutputStream, cancelIt: () => Unit) {
  private val counting = new CountingOutputStream(underlying)
  def stream: OutputStream = counting
  def committedSize(): Long = counting.count
  def cancel(): Unit = cancelIt()
}

object AtomicOutput {

  /** Through Spark's CheckpointFileManager (any Hadoop-compatible file system). */
  def apply(out: CheckpointFileManager.CancellableFSDataOutputStream): AtomicOutput =
    new AtomicOutput(out, () => out.cancel())

  /** On the local file system, without Hadoop ([[LocalAtomicFile]]). */
  def apply(out: LocalAtomicFile.Stream): AtomicOutput = new AtomicOutput(out, () => out.cancel())
}

/** Counts the bytes written through it. */
final class CountingOutputStream(out: OutputStream) extends FilterOutputStream(out) {
  var count = 0L
  override def write(b: Int): Unit = { out.write(b); count += 1 }
  override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); count += len }
}
