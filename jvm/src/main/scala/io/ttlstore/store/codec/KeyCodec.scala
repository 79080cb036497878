package io.ttlstore.store.codec

import org.apache.spark.sql.catalyst.expressions.{JoinedRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.streaming.state.{KeyStateEncoderSpec, NoPrefixKeyStateEncoderSpec, PrefixKeyScanStateEncoderSpec}
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform

import io.ttlstore.bytes.Bytes
import io.ttlstore.errors.TtlStoreErrors

/**
 * Turns Spark's key rows into RocksDB keys and back. Keys are compared as bytes; equal key rows have
 * equal UnsafeRow bytes, which is all that point lookups need.
 *
 * Prefix-scan keys (session windows) put the prefix first, with its length, so that all keys of one
 * prefix are adjacent:
 * {{{
 *   +-------------------+--------------------+---------------------------+
 *   | prefix length p   | prefix row bytes   | remaining key row bytes   |
 *   | int32 big-endian  | (p bytes)          |                           |
 *   +-------------------+--------------------+---------------------------+
 * }}}
 *
 * Not thread-safe (projections are reused): one codec per provider, used by one task at a time.
 */
sealed trait KeyCodec {
  def encode(key: UnsafeRow): Array[Byte]
  def decode(stored: Array[Byte]): UnsafeRow
  def encodePrefix(prefix: UnsafeRow): Array[Byte]
}

object KeyCodec {
  def apply(spec: KeyStateEncoderSpec, keySchema: StructType): KeyCodec = spec match {
    case _: NoPrefixKeyStateEncoderSpec => new WholeKeyCodec(keySchema.length)
    case p: PrefixKeyScanStateEncoderSpec => new PrefixKeyCodec(keySchema, p.numColsPrefixKey)
    case other =>
      throw TtlStoreErrors.unsupportedOperation(
        s"the key encoder ${other.getClass.getSimpleName}",
        "range-scan keys are used only by transformWithState and join state formats 3/4, which " +
          "Spark 4.3 allows only on its own RocksDBStateStoreProvider.")
  }

  /**
   * A fresh copy of the row's bytes. `UnsafeRow.getBytes` may hand back the row's own buffer,
   * which Spark reuses for the next row; keys we keep (the store's last-lookup memo) must not
   * change under us.
   */
  private[ttlstore] def rowBytes(row: UnsafeRow): Array[Byte] = {
    val out = new Array[Byte](row.getSizeInBytes)
    row.writeToMemory(out, Platform.BYTE_ARRAY_OFFSET)
    out
  }

  private[ttlstore] def rowAt(numFields: Int, bytes: Array[Byte], offset: Int, length: Int): UnsafeRow = {
    val row = new UnsafeRow(numFields)
    row.pointTo(bytes, Platform.BYTE_ARRAY_OFFSET + offset, length)
    row
  }
}

final class WholeKeyCodec(numFields: Int) extends KeyCodec {
  override def encode(key: UnsafeRow): Array[Byte] = KeyCodec.rowBytes(key)
  override def decode(stored: Array[Byte]): UnsafeRow =
    KeyCodec.rowAt(numFields, stored, 0, stored.length)
  override def encodePrefix(prefix: UnsafeRow): Array[Byte] =
    throw TtlStoreErrors.unsupportedOperation("prefixScan",
      "the operator declared its state keys without a prefix (NoPrefixKeyStateEncoderSpec).")
}

final class PrefixKeyCodec(keySchema: StructType, numColsPrefixKey: Int) extends KeyCodec {
  require(numColsPrefixKey > 0 && numColsPrefixKey < keySchema.length,
    s"a prefix of $numColsPrefixKey columns of a ${keySchema.length}-column key")

  private val prefixSchema = StructType(keySchema.take(numColsPrefixKey))
  private val remainderSchema = StructType(keySchema.drop(numColsPrefixKey))
  private val prefixProjection = UnsafeProjection.create(prefixSchema.fields.zipWithIndex.map {
    case (f, i) => org.apache.spark.sql.catalyst.expressions.BoundReference(i, f.dataType, f.nullable)
  }.toSeq)
  private val remainderProjection = UnsafeProjection.create(remainderSchema.fields.zipWithIndex.map {
    case (f, i) => org.apache.spark.sql.catalyst.expressions.BoundReference(
        i + numColsPrefixKey, f.dataType, f.nullable)
  }.toSeq)
  private val joinedProjection = UnsafeProjection.create(keySchema)
  private val joined = new JoinedRow()

  override def encode(key: UnsafeRow): Array[Byte] = {
    val prefix = prefixProjection(key)
    val prefixBytes = prefix.getSizeInBytes
    val remainder = remainderProjection(key)
    val out = new Array[Byte](4 + prefixBytes + remainder.getSizeInBytes)
    Bytes.writeInt(out, 0, prefixBytes)
    prefix.writeToMemory(out, Platform.BYTE_ARRAY_OFFSET + 4)
    remainder.writeToMemory(out, Platform.BYTE_ARRAY_OFFSET + 4 + prefixBytes)
    out
  }

  override def decode(stored: Array[Byte]): UnsafeRow = {
    val p = Bytes.readInt(stored, 0)
    val prefix = KeyCodec.rowAt(numColsPrefixKey, stored, 4, p)
    val remainder = KeyCodec.rowAt(remainderSchema.length, stored, 4 + p, stored.length - 4 - p)
    joinedProjection(joined(prefix, remainder)).copy()
  }

  override def encodePrefix(prefix: UnsafeRow): Array[Byte] = {
    val size = prefix.getSizeInBytes
    val out = new Array[Byte](4 + size)
    Bytes.writeInt(out, 0, size)
    prefix.writeToMemory(out, Platform.BYTE_ARRAY_OFFSET + 4)
    out
  }
}
