package io.ttlstore.checkpoint

import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization

/**
 * A store's adoption of the state Spark's own provider left (KIP-258): version `version` of the
 * `provider`'s files (`hdfs` or `rocksdb`, read with `codec`) is the store's base, held as legacy
 * rows until they are upgraded. Written as `ttlstore/adopted.json` by the first commit after the
 * adoption, so that every later load finds the same base; Spark's files are never changed.
 */
final case class AdoptionRecord(provider: String, version: Long, codec: String, adoptedAtMs: Long)

object AdoptionRecord {
  private implicit val formats: Formats = DefaultFormats
  val FileName = "adopted.json"

  def fromJson(json: String): AdoptionRecord = Serialization.read[AdoptionRecord](json)
  def toJson(r: AdoptionRecord): String = Serialization.write(r)

  /** What makes a parsed record unusable (a field missing or out of range), if anything. */
  def problem(r: AdoptionRecord): Option[String] =
    if (r.provider == null || r.provider.isEmpty) Some("it names no provider")
    else if (r.codec == null || r.codec.isEmpty) Some("it names no codec")
    else if (r.version < 0) Some(s"its version ${r.version} is negative")
    else None
}
