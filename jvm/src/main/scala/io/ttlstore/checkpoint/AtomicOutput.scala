package io.ttlstore.checkpoint

import java.io.{FilterOutputStream, OutputStream}

import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager

/** An atomically created file: visible under its name only once the stream is closed. */
final class AtomicOutput(underlying: CheckpointFileManager.CancellableFSDataOutputStream) {
  private val counting = new CountingOutputStream(underlying)
  def stream: OutputStream = counting
  def committedSize(): Long = counting.count
  def cancel(): Unit = underlying.cancel()
}

/** Counts the bytes written through it. */
final class CountingOutputStream(out: OutputStream) extends FilterOutputStream(out) {
  var count = 0L
  override def write(b: Int): Unit = { out.write(b); count += 1 }
  override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); count += len }
}
