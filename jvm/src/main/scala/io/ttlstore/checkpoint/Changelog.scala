package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

/**
 * The changelog of one version: every put and delete of that version, in order.
 *
 * {{{
 *   file  := header body
 *   header:= "TTLC" (4 bytes) | format version (1 byte) | codec name length (1 byte) | codec name
 *   body  := compressed with the named Spark codec ( ids record* end )
 *   ids   := idLen int32 | id | items int32 | ( version int64 | idLen int32 | id )*
 *            the version's checkpoint id (idLen 0: none, format v1) and its lineage
 *   record:= 0x01 | keyLen int32 | key | valueLen int32 | value      (put; value as stored)
 *          | 0x02 | keyLen int32 | key                               (delete)
 *   end   := 0x00 | rowsAfter int64 | records int64 | ttlLen int32 | ttl | crc32c int32
 *   ttl   := the version's [[TtlRecord]] as UTF-8 JSON (ttlLen bytes)
 * }}}
 * Integers are big-endian. The CRC32C covers every uncompressed body byte before it; a body that
 * ends before `end` was truncated. Values are stored exactly as in RocksDB (timestamp included),
 * so replaying a changelog reproduces the rows byte for byte. Checkpoint ids are ASCII; the lineage
 * ([[Lineage]]) lists the (version, id) of each version from the base this one was written on to
 * the one before it. Older formats are still read: format 2 has no `ids`, format 1 (before TTL)
 * also no `ttlLen | ttl` in its end record.
 */
object Changelog {
  val Magic: Array[Byte] = "TTLC".getBytes(StandardCharsets.US_ASCII)
  val FormatVersion: Int = 3
  private[ttlstore] val OpEnd = 0
  private[ttlstore] val OpPut = 1
  private[ttlstore] val OpDelete = 2

  sealed trait Record
  final case class Put(key: Array[Byte], value: Array[Byte]) extends Record
  final case class Delete(key: Array[Byte]) extends Record
}
