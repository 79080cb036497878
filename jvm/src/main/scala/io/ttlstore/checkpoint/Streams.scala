package io.ttlstore.checkpoint

import java.io.{InputStream, OutputStream}
import java.util.zip.CRC32C

object Streams {

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
