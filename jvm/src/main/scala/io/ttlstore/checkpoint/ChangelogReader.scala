package io.ttlstore.checkpoint

import java.io._
import java.nio.charset.StandardCharsets
import java.util.zip.{CheckedInputStream, CRC32C}

import scala.util.control.NonFatal

import io.ttlstore.bytes.Bytes
import io.ttlstore.errors.{FileSystemFailure, TtlStoreErrors, TtlStoreException}

/** Reads one changelog, failing with the file and version named when it is damaged. */
final class ChangelogReader(file: String, version: Long, raw: InputStream) extends AutoCloseable {
  import Changelog._

  private val crc = new CRC32C()
  private var format = 0
  private val data: DataInputStream = {
    val magic = readHeader(raw, 4)
    if (!java.util.Arrays.equals(magic, Magic)) corrupted("not a ttlstore changelog (bad magic)")
    format = raw.read()
    if (format < 0) truncated()
    if (format > FormatVersion) throw TtlStoreErrors.formatTooNew(file, format, FormatVersion)
    val nameLength = raw.read()
    if (nameLength < 0) truncated()
    val name = new String(readHeader(raw, nameLength), StandardCharsets.US_ASCII)
    val decompressed =
      try Compression.inputStream(name, raw)
      catch {
        case e: TtlStoreException if e.errorName == FileSystemFailure.ErrorName => throw e
        case _: TtlStoreException => corrupted(s"unknown codec '$name'")
        case e: IOException => corrupted(s"unreadable compressed body: ${e.getMessage}")
      }
    // The checksum stream sits above the buffer so that it sees exactly the bytes handed out.
    new DataInputStream(new CheckedInputStream(new BufferedInputStream(decompressed, 64 * 1024), crc))
  }
  private var finished = false
  private var records = 0L
  private val (idValue, lineageValue): (Option[String], Seq[LineageItem]) =
    if (format < 3) (None, Nil)
    else guarded {
      val id = readId("checkpoint id")
      val items = data.readInt()
      if (items < 0 || items > 1000000) corrupted(s"impossible lineage length $items")
      val lineage = (0 until items).map { _ =>
        val v = data.readLong()
        LineageItem(v, readId("lineage id").getOrElse(corrupted("a lineage item without a checkpoint id")))
      }
      (id, lineage)
    }
  private var rowsAfterValue = -1L
  private var ttlValue: Option[TtlRecord] = None

  /** The file's format version (see [[Changelog.FormatVersion]]). */
  def formatVersion: Int = format

  /** The checkpoint id the version was committed under (format v2; None in format v1 and before format 3). */
  def checkpointId: Option[String] = idValue

  /** The (version, id) of every version from this one's base to the one before it ([[Lineage]]). */
  def lineage: Seq[LineageItem] = lineageValue

  /** Total rows of the store after this version; valid once every record was read. */
  def rowsAfter: Long = { require(finished, "read every record first"); rowsAfterValue }

  /** The version's TTL record (None in format 1); valid once every record was read. */
  def ttl: Option[TtlRecord] = { require(finished, "read every record first"); ttlValue }

  /** The next record, or None after the end marker (whose checksum is verified then). */
  def next(): Option[Record] =
    if (finished) None
    else guarded {
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
  def readAll(): Seq[Record] = Iterator.continually(next()).takeWhile(_.isDefined).flatten.toVector

  override def close(): Unit = data.close()

  private def guarded[T](body: => T): T =
    try body
    catch {
      case _: EOFException => truncated()
      case e: TtlStoreException => throw e
      case e: IOException => corrupted(e.getMessage)
    }

  private def readTrailerInt(): Int = {
    // The checksum itself is not part of what it covers: read it around the checked stream.
    val b = new Array[Byte](4)
    data.readFully(b)
    Bytes.readInt(b, 0)
  }

  private def readBytes(what: String): Array[Byte] = {
    val length = data.readInt()
    if (length < 0 || length > (1 << 30)) corrupted(s"impossible $what length $length")
    Streams.readExactly(data, length)
  }

  private def readId(what: String): Option[String] = {
    val length = data.readInt()
    if (length < 0 || length > 64) corrupted(s"impossible $what length $length")
    val id = new String(Streams.readExactly(data, length), StandardCharsets.US_ASCII)
    if (id.isEmpty) None
    else if (!FileNames.isCheckpointId(id)) corrupted(s"an impossible $what '$id'")
    else Some(id)
  }

  private def readHeader(in: InputStream, n: Int): Array[Byte] =
    try Streams.readExactly(in, n)
    catch { case _: EOFException => truncated() }

  private def truncated(): Nothing = throw TtlStoreErrors.changelogTruncated(file, version)
  private def corrupted(detail: String): Nothing =
    throw TtlStoreErrors.changelogCorrupted(file, version, detail)
}
