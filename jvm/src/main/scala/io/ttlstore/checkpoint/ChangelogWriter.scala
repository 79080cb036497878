package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets
import java.util.zip.{CheckedOutputStream, CRC32C}

/**
 * Writes one changelog; `commit` makes it visible atomically, `cancel` leaves nothing behind. Under
 * checkpoint format v2 it records the version's checkpoint id and lineage first.
 */
final class ChangelogWriter(
    out: AtomicOutput,
    codecName: String,
    checkpointId: Option[String],
    lineage: Seq[LineageItem]) {
  import Changelog._

  private val crc = new CRC32C()
  private val data: RecordOutput = {
    out.stream.write(Magic)
    out.stream.write(FormatVersion)
    val name = Compression.shortName(codecName).getBytes(StandardCharsets.US_ASCII)
    out.stream.write(name.length)
    out.stream.write(name)
    new RecordOutput(new CheckedOutputStream(Compression.codec(codecName).compressedOutputStream(out.stream), crc))
  }
  writeId(checkpointId.getOrElse(""))
  data.writeInt(lineage.size)
  lineage.foreach { item =>
    data.writeLong(item.version)
    writeId(item.id)
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

  private def writeId(id: String): Unit = {
    val bytes = id.getBytes(StandardCharsets.US_ASCII)
    data.writeInt(bytes.length)
    data.write(bytes)
  }
}
