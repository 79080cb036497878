package io.ttlstore.checkpoint

import org.json4s.{JArray, JLong, JObject, JString, JValue}
import org.json4s.jackson.JsonMethods

import io.ttlstore.ttl.{StateVisibility, TimeCharacteristic, TimestampHistogram, TtlPolicy, UpdateType}

/**
 * What a committed version records about time, in its changelog's end record and its snapshot's
 * manifest: the TTL settings in force when it was written, the stream time (event time), and the
 * histogram of the stored rows' timestamps. `ttlstore`'s own settings are not pinned by Spark's
 * offset log, so this is how a restart, a retry or a reader learns what the data meant.
 *
 * {{{
 *   {"ttlMs":600000,"updateType":"OnCreateAndWrite","stateVisibility":"NeverReturnExpired",
 *    "timeCharacteristic":"ProcessingTime","histogramGranularityMs":1,
 *    "histogram":[[1763800000000,42],[1763800001000,7]],"countedFromMs":1763799400000,
 *    "nowMs":1763800001000}
 * }}}
 *
 * Fields that are None are left out (and read as None when absent or null), through [[JsonFields]].
 */
final case class TtlRecord(
    ttlMs: Long,
    updateType: String,
    stateVisibility: String,
    timeCharacteristic: String,
    eventTimeColumn: Option[String],
    streamTimeMs: Option[Long],
    histogramGranularityMs: Long,
    histogram: List[List[Long]],
    /** Rows stamped earlier are expired and no longer counted (native filter); None: all count. */
    countedFromMs: Option[Long] = None,
    /** The "now" the version was written with (processing time), so readers judge as it did. */
    nowMs: Option[Long] = None,
    /** Rows still in the legacy family (an adopted checkpoint's rows not yet upgraded). */
    legacyRows: Option[Long] = None,
    /** Event time: the batch's watermark the version was judged by, when the query has one. */
    watermarkMs: Option[Long] = None) {

  /** The time a reader judges the version by, as the query did; None when none was recorded. */
  def judgedAtMs: Option[Long] = timeCharacteristicValue.flatMap {
    case TimeCharacteristic.ProcessingTime => nowMs
    case TimeCharacteristic.EventTime => watermarkMs.orElse(streamTimeMs)
  }

  def timeCharacteristicValue: Option[TimeCharacteristic] =
    TtlPolicy.named(TimeCharacteristic.all)(timeCharacteristic)

  /** The policy recorded, or None if this ttlstore does not know one of its names. */
  def policy: Option[TtlPolicy] = for {
    u <- TtlPolicy.named(UpdateType.all)(updateType)
    v <- TtlPolicy.named(StateVisibility.all)(stateVisibility)
    t <- timeCharacteristicValue
  } yield TtlPolicy(ttlMs, u, v, t, eventTimeColumn)

  def timestamps: TimestampHistogram =
    TimestampHistogram(histogramGranularityMs, histogram.collect { case b :: n :: Nil => (b, n) })

  def toJson: String = JsonMethods.compact(toJValue)

  def toJValue: JObject = JsonFields.obj(
    "ttlMs" -> JLong(ttlMs),
    "updateType" -> JString(updateType),
    "stateVisibility" -> JString(stateVisibility),
    "timeCharacteristic" -> JString(timeCharacteristic),
    "eventTimeColumn" -> JsonFields.opt(eventTimeColumn)(JString(_)),
    "streamTimeMs" -> JsonFields.opt(streamTimeMs)(JLong(_)),
    "histogramGranularityMs" -> JLong(histogramGranularityMs),
    "histogram" -> JArray(histogram.map(b => JArray(b.map(JLong(_))))),
    "countedFromMs" -> JsonFields.opt(countedFromMs)(JLong(_)),
    "nowMs" -> JsonFields.opt(nowMs)(JLong(_)),
    "legacyRows" -> JsonFields.opt(legacyRows)(JLong(_)),
    "watermarkMs" -> JsonFields.opt(watermarkMs)(JLong(_)))
}

object TtlRecord {

  def apply(policy: TtlPolicy, streamTimeMs: Option[Long], histogram: TimestampHistogram,
      countedFromMs: Option[Long], nowMs: Option[Long], legacyRows: Option[Long], watermarkMs: Option[Long])
      : TtlRecord =
    TtlRecord(policy.ttlMs, policy.updateType.name, policy.visibility.name,
      policy.timeCharacteristic.name, policy.eventTimeColumn, streamTimeMs,
      histogram.granularityMs, histogram.entries.map { case (b, n) => List(b, n) }.toList,
      countedFromMs, nowMs, legacyRows, watermarkMs)

  /** Parses what [[TtlRecord.toJson]] writes; fails naming a field that is missing or of the wrong type. */
  def fromJson(json: String): TtlRecord = fromJValue(JsonMethods.parse(json))

  def fromJValue(v: JValue): TtlRecord = {
    val f = new JsonFields(v)
    val histogram = f.required("histogram", f.array).map {
      case JArray(values) => values.map(JsonFields.long("histogram"))
      case _ => JsonFields.wrong("histogram")
    }
    TtlRecord(
      ttlMs = f.required("ttlMs", f.long),
      updateType = f.required("updateType", f.string),
      stateVisibility = f.required("stateVisibility", f.string),
      timeCharacteristic = f.required("timeCharacteristic", f.string),
      eventTimeColumn = f.string("eventTimeColumn"),
      streamTimeMs = f.long("streamTimeMs"),
      histogramGranularityMs = f.required("histogramGranularityMs", f.long),
      histogram = histogram,
      countedFromMs = f.long("countedFromMs"),
      nowMs = f.long("nowMs"),
      legacyRows = f.long("legacyRows"),
      watermarkMs = f.long("watermarkMs"))
  }
}
