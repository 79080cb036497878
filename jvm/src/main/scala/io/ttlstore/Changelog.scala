package io.ttlstore

import java.io._
import java.nio.charset.StandardCharsets
import java.util.zip.{CheckedInputStream, CheckedOutputStream, CRC32C}

import scala.util.control.NonFatal

import org.apache.spark.SparkConf
import org.apache.spark.io.{CompressionCodec, LZ4CompressionCodec, LZFCompressionCodec, SnappyCompressionCodec, ZStdCompressionCodec}

/**
 * The changelog of one version: every put and delete of that version, in order.
 *
 * {{{
 *   file  := header body
 *   header:= "TTLC" (4 bytes) | format version (1 byte) | codec name length (1 byte) | codec name
 *   body  := compressed with the named Spark codec ( record* end )
 *   record:= 0x01 | keyLen int32 | key | valueLen int32 | value      (put; value as stored)
 *          | 0x02 | keyLen int32 | key                               (delete)
 *   end   := 0x00 | rowsAfter int64 | records int64 | ttlLen int32 | ttl | crc32c int32
 *   ttl   := the version's [[TtlRecord]] as UTF-8 JSON (ttlLen bytes)
 * }}}
 * Integers are big-endian. The CRC32C covers every uncompressed body byte before it; a body that
 * ends before `end` was truncated. Values are stored exactly as in RocksDB (timestamp included),
 * so replaying a changelog reproduces the rows byte for byte. Format 1 (before TTL) had no
 * `ttlLen | ttl` in its end record; it is still read.
 */
object Changelog {
  val Magic: Array[Byte] = "TTLC".getBytes(StandardCharsets.US_ASCII)
  val FormatVersion: Int = 2
  private[ttlstore] val OpEnd = 0
  private[ttlstore] val OpPut = 1
  private[ttlstore] val OpDelete = 2

  /**
   * Spark's codec named by `spark.sql.streaming.stateStore.compression.codec`: a short name, or
   * the class name of one of Spark's codecs (Spark accepts both).
   */
  def codec(name: String): CompressionCodec = {
    val conf = new SparkConf(false)
    shortName(name) match {
      case "lz4" => new LZ4CompressionCodec(conf)
      case "zstd" => new ZStdCompressionCodec(conf)
      case "snappy" => new SnappyCompressionCodec(conf)
      case "lzf" => new LZFCompressionCodec(conf)
      case other => throw new IllegalArgumentException(s"unknown compression codec '$other'")
    }
  }

  /** `org.apache.spark.io.ZStdCompressionCodec` -> `zstd`; short names stay as they are. */
  def shortName(name: String): String =
    name.split('.').last.stripSuffix("CompressionCodec").toLowerCase(java.util.Locale.ROOT)

  sealed trait Record
  final case class Put(key: Array[Byte], value: Array[Byte]) extends Record
  final case class Delete(key: Array[Byte]) extends Record
}

/** Writes one changelog; `commit` makes it visible atomically, `cancel` leaves nothing behind. */
final class ChangelogWriter(out: CheckpointFiles.AtomicOutput, codecName: String) {
  import Changelog._

  private val crc = new CRC32C()
  private val data: DataOutputStream = {
    out.stream.write(Magic)
    out.stream.write(FormatVersion)
    val name = shortName(codecName).getBytes(StandardCharsets.US_ASCII)
    out.stream.write(name.length)
    out.stream.write(name)
    new DataOutputStream(new BufferedOutputStream(
      new CheckedOutputStream(codec(codecName).compressedOutputStream(out.stream), crc), 64 * 1024))
  }
  private var records = 0L

  def put(key: Array[Byte], value: Array[Byte]): Unit = {
    data.writeByte(OpPut)
    data.writeInt(key.length); data.write(key)
    data.writeInt(value.length); data.write(value)
    records += 1
  }

  def delete(key: Array[Byte]): Unit = {
    data.writeByte(OpDelete)
    data.writeInt(key.length); data.write(key)
    records += 1
  }

  /** Seals the file with the row count and TTL record after this version; returns the bytes written. */
  def commit(rowsAfter: Long, ttl: TtlRecord): Long = {
    data.writeByte(OpEnd)
    data.writeLong(rowsAfter)
    data.writeLong(records)
    val json = ttl.toJson.getBytes(StandardCharsets.UTF_8)
    data.writeInt(json.length)
    data.write(json)
    data.flush()
    data.writeInt(crc.getValue.toInt)
    data.close() // closes the atomic stream, which renames the file into place
    out.committedSize()
  }

  def cancel(): Unit = out.cancel()
}

/** Reads one changelog, failing with the file and version named when it is damaged. */
final class ChangelogReader(file: String, version: Long, raw: InputStream) extends AutoCloseable {
  import Changelog._

  private val crc = new CRC32C()
  private var format = 0
  private val data: DataInputStream = {
    val magic = readFully(raw, 4, "header")
    if (!java.util.Arrays.equals(magic, Magic)) corrupted("not a ttlstore changelog (bad magic)")
    format = raw.read()
    if (format < 0) truncated()
    if (format > FormatVersion) throw TtlStoreErrors.formatTooNew(file, format, FormatVersion)
    val nameLength = raw.read()
    if (nameLength < 0) truncated()
    val name = new String(readFully(raw, nameLength, "codec name"), StandardCharsets.US_ASCII)
    val codec =
      try Changelog.codec(name)
      catch { case e: IllegalArgumentException => corrupted(s"unknown codec '$name'") }
    val decompressed =
      try codec.compressedInputStream(raw)
      catch { case e: IOException => corrupted(s"unreadable compressed body: ${e.getMessage}") }
    // The checksum stream sits above the buffer so that it sees exactly the bytes handed out.
    new DataInputStream(new CheckedInputStream(new BufferedInputStream(decompressed, 64 * 1024), crc))
  }
  private var finished = false
  private var records = 0L
  private var rowsAfterValue = -1L
  private var ttlValue: Option[TtlRecord] = None

  /** The file's format version (see [[Changelog.FormatVersion]]). */
  def formatVersion: Int = format

  /** Total rows of the store after this version; valid once every record was read. */
  def rowsAfter: Long = { require(finished, "read every record first"); rowsAfterValue }

  /** The version's TTL record (None in format 1); valid once every record was read. */
  def ttl: Option[TtlRecord] = { require(finished, "read every record first"); ttlValue }

  /** The next record, or None after the end marker (whose checksum is verified then). */
  def next(): Option[Record] = if (finished) None else guarded {
    data.read() match {
      case -1 => truncated()
      case OpPut =>
        val key = readBytes("key")
        val value = readBytes("value")
        records += 1
        Some(Put(key, value))
      case OpDelete =>
        records += 1
        Some(Delete(readBytes("key")))
      case OpEnd =>
        rowsAfterValue = data.readLong()
        val declared = data.readLong()
        val ttlJson = if (format >= 2) Some(new String(readBytes("TTL record"), StandardCharsets.UTF_8)) else None
        val expected = crc.getValue.toInt
        val stored = readTrailerInt()
        if (declared != records) corrupted(s"declares $declared records, holds $records")
        if (stored != expected) corrupted("checksum mismatch")
        // The codec's own end block follows ours; a file cut inside it must not pass as whole.
        if (data.read() != -1) corrupted("data after the end marker")
        ttlValue = ttlJson.map { j =>
          try TtlRecord.fromJson(j)
          catch { case NonFatal(e) => corrupted(s"unreadable TTL record: ${e.getMessage}") }
        }
        finished = true
        None
      case op => corrupted(s"unknown record type $op")
    }
  }

  /** Reads the whole file (used by tests and tools). */
  def readAll(): Seq[Record] = Iterator.continually(next()).takeWhile(_.isDefined).flatten.toSeq

  override def close(): Unit = data.close()

  private def guarded[T](body: => T): T =
    try body catch {
      case _: EOFException => truncated()
      case e: TtlStoreException => throw e
      case e: IOException => corrupted(e.getMessage)
    }

  private def readTrailerInt(): Int = {
    // The checksum itself is not part of what it covers: read it around the checked stream.
    val b = new Array[Byte](4)
    data.readFully(b)
    ((b(0) & 0xff) << 24) | ((b(1) & 0xff) << 16) | ((b(2) & 0xff) << 8) | (b(3) & 0xff)
  }

  private def readBytes(what: String): Array[Byte] = {
    val length = data.readInt()
    if (length < 0 || length > (1 << 30)) corrupted(s"impossible $what length $length")
    val bytes = new Array[Byte](length)
    data.readFully(bytes)
    bytes
  }

  private def readFully(in: InputStream, n: Int, what: String): Array[Byte] = {
    val bytes = new Array[Byte](n)
    var read = 0
    while (read < n) {
      val r = in.read(bytes, read, n - read)
      if (r < 0) truncated()
      read += r
    }
    bytes
  }

  private def truncated(): Nothing = throw TtlStoreErrors.changelogTruncated(file, version)
  private def corrupted(detail: String): Nothing =
    throw TtlStoreErrors.changelogCorrupted(file, version, detail)
}
