package io.ttlstore.checkpoint

import java.io.OutputStream

import io.ttlstore.bytes.Bytes

/**
 * A buffer in front of a stream for files written record by record: big-endian integers and byte
 * arrays as `DataOutputStream` lays them out, without its lock and byte-at-a-time calls per field
 * (a changelog write of a key and value was nine synchronized single-byte writes into
 * `BufferedOutputStream`). Not thread-safe: one writer.
 */
final class RecordOutput(out: OutputStream, size: Int = 64 * 1024) extends AutoCloseable {
  private val buffer = new Array[Byte](size)
  private var used = 0

  def writeByte(b: Int): Unit = {
    room(1)
    buffer(used) = b.toByte
    used += 1
  }

  def writeInt(v: Int): Unit = {
    room(4)
    Bytes.writeInt(buffer, used, v)
    used += 4
  }

  def writeLong(v: Long): Unit = {
    room(8)
    Bytes.writeLong(buffer, used, v)
    used += 8
  }

  def write(bytes: Array[Byte]): Unit =
    if (bytes.length > buffer.length - used) {
      flushBuffer()
      if (bytes.length >= buffer.length) out.write(bytes) else append(bytes)
    } else append(bytes)

  /** Hands everything written so far to the stream, and flushes it. */
  def flush(): Unit = {
    flushBuffer()
    out.flush()
  }

  override def close(): Unit =
    try flushBuffer()
    finally out.close()

  private def append(bytes: Array[Byte]): Unit = {
    System.arraycopy(bytes, 0, buffer, used, bytes.length)
    used += bytes.length
  }

  private def room(n: Int): Unit = if (buffer.length - used < n) flushBuffer()

  private def flushBuffer(): Unit = if (used > 0) {
    out.write(buffer, 0, used)
    used = 0
  }
}
