package io.ttlstore.bytes

/**
 * Fixed-width integers in byte arrays, written once for every format that lays them out by hand
 * (timestamped values, prefix keys, changelog trailers, Spark's RocksDB prefix keys). Pure.
 * Big-endian unless the name says otherwise; callers check lengths.
 */
object Bytes {
  def readLong(in: Array[Byte], offset: Int): Long = {
    var v = 0L
    var i = 0
    while (i < 8) {
      v = (v << 8) | (in(offset + i) & 0xffL)
      i += 1
    }
    v
  }

  def writeLong(out: Array[Byte], offset: Int, value: Long): Unit = {
    var i = 7
    var v = value
    while (i >= 0) {
      out(offset + i) = (v & 0xff).toByte
      v >>>= 8
      i -= 1
    }
  }

  def readInt(in: Array[Byte], offset: Int): Int =
    ((in(offset) & 0xff) << 24) | ((in(offset + 1) & 0xff) << 16) |
      ((in(offset + 2) & 0xff) << 8) | (in(offset + 3) & 0xff)

  def writeInt(out: Array[Byte], offset: Int, value: Int): Unit = {
    out(offset) = (value >>> 24).toByte
    out(offset + 1) = (value >>> 16).toByte
    out(offset + 2) = (value >>> 8).toByte
    out(offset + 3) = value.toByte
  }

  def readIntLittleEndian(in: Array[Byte], offset: Int): Int =
    (in(offset) & 0xff) | ((in(offset + 1) & 0xff) << 8) |
      ((in(offset + 2) & 0xff) << 16) | ((in(offset + 3) & 0xff) << 24)
}
