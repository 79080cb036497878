package io.ttlstore.checkpoint

import java.io.{EOFException, InputStream, OutputStream}
import java.util.zip.CRC32C

object Streams {

  /** The most a length-prefixed read allocates before the stream has shown it holds more. */
  private val FirstChunk = 1 << 20

  /**
   * The next `length` bytes of `in`, or EOFException if it ends first. The array grows as bytes
   * arrive, so a damaged length field (two GiB in a file of a few KiB) fails at the file's end
   * instead of allocating what it claims.
   */
  def readExactly(in: InputStream, length: Int): Array[Byte] = {
    require(length >= 0, s"negative length $length")
    var bytes = new Array[Byte](math.min(length, FirstChunk))
    var read = 0
    while (read < length) {
      if (read == bytes.length) bytes = java.util.Arrays.copyOf(bytes, math.min(length.toLong, 2L * read).toInt)
      val n = in.read(bytes, read, bytes.length - read)
      if (n < 0) throw new EOFException(s"$read of $length bytes")
      read += n
    }
    bytes
  }

  /**
   * Copies `in` to `out` and closes `in`; returns the byte count and CRC32C of what was copied.
   * `out` stays open: closing an atomic output publishes it, which only a caller that saw the copy
   * succeed may do.
   */
  def copyWithCrc(in: InputStream, out: OutputStream): (Long, Long) = {
    val crc = new CRC32C()
    val buffer = new Array[Byte](256 * 1024)
    var total = 0L
    try {
      var n = in.read(buffer)
      while (n >= 0) {
        out.write(buffer, 0, n)
        crc.update(buffer, 0, n)
        total += n
        n = in.read(buffer)
      }
    } finally in.close()
    (total, crc.getValue)
  }
}
