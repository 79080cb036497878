package io.ttlstore.checkpoint

import java.io.{FilterInputStream, IOException, InputStream}

import io.ttlstore.bytes.Bytes

/**
 * Checks the block headers of an lz4 stream (lz4-java's block format, which Spark's lz4 codec
 * writes) before its decompressor sees them. The decompressor allocates what a header claims, with
 * no bound: a few flipped bits in a file of a few KiB made it allocate 1 GiB. A block's lengths
 * cannot exceed the block size its own header declares (at most 32 MiB), so a header that says more
 * fails here, as damage, with an IOException. Bytes pass through unchanged.
 *
 * {{{
 *   block := "LZ4Block" | token (method << 4 | level) | compressedLen int32 LE | originalLen int32 LE
 *            | checksum int32 LE | compressedLen bytes
 * }}}
 */
final class Lz4Blocks(in: InputStream) extends FilterInputStream(in) {
  import Lz4Blocks._

  private val header = new Array[Byte](HeaderBytes)
  private var headerRead = 0

  /** Bytes of the current block's body still to pass; 0 while a header is read. */
  private var bodyLeft = 0L

  private val one = new Array[Byte](1)

  override def read(): Int = if (read(one, 0, 1) < 0) -1 else one(0) & 0xff

  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    if (len == 0) return 0
    val want = if (bodyLeft > 0) math.min(len.toLong, bodyLeft).toInt else math.min(len, HeaderBytes - headerRead)
    val n = in.read(b, off, want)
    if (n > 0) {
      if (bodyLeft > 0) bodyLeft -= n
      else {
        System.arraycopy(b, off, header, headerRead, n)
        headerRead += n
        if (headerRead == HeaderBytes) {
          bodyLeft = check(header)
          headerRead = 0
        }
      }
    }
    n
  }

  override def skip(n: Long): Long = {
    val buffer = new Array[Byte](math.min(n, 8192L).toInt)
    val r = read(buffer, 0, buffer.length)
    if (r < 0) 0 else r
  }

  override def markSupported(): Boolean = false
}

object Lz4Blocks {
  private val Magic = "LZ4Block".getBytes("US-ASCII")
  private val HeaderBytes = Magic.length + 13

  /** The body length of a block with this header; throws if the header claims more than its block size. */
  private def check(header: Array[Byte]): Long = {
    if (!java.util.Arrays.equals(header, 0, Magic.length, Magic, 0, Magic.length))
      return 0L // the decompressor names it
    val level = header(Magic.length) & 0x0f
    val blockSize = 1L << (10 + level)
    val compressed = Bytes.readIntLittleEndian(header, Magic.length + 1)
    val original = Bytes.readIntLittleEndian(header, Magic.length + 5)
    val limit = blockSize + blockSize / 255 + 16 // lz4's worst case for incompressible data
    if (original < 0 || original > blockSize || compressed < 0 || compressed > limit) {
      throw new IOException(
        s"an lz4 block claims $compressed compressed and $original original bytes, more than its block size $blockSize")
    }
    compressed.toLong
  }
}
