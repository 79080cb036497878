package io.ttlstore.checkpoint

import org.json4s.{JArray, JInt, JLong, JNothing, JNull, JObject, JString, JValue}
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
 * Fields that are None are left out (and read as None when absent or null). Written and read
 * through json4s's tree, not its reflection: reflection read the case class's Scala signature on
 * first use, which took most of a query's first commit (0.5-0.8 s).
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

  def toJson: String = {
    val fields = List(
      "ttlMs" -> JLong(ttlMs),
      "updateType" -> JString(updateType),
      "stateVisibility" -> JString(stateVisibility),
      "timeCharacteristic" -> JString(timeCharacteristic),
      "eventTimeColumn" -> eventTimeColumn.map(JString(_)).getOrElse(JNothing),
      "streamTimeMs" -> long(streamTimeMs),
      "histogramGranularityMs" -> JLong(histogramGranularityMs),
      "histogram" -> JArray(histogram.map(b => JArray(b.map(JLong(_))))),
      "countedFromMs" -> long(countedFromMs),
      "nowMs" -> long(nowMs),
      "legacyRows" -> long(legacyRows),
      "watermarkMs" -> long(watermarkMs))
    JsonMethods.compact(JObject(fields.filter(_._2 != JNothing)))
  }

  private def long(v: Option[Long]): JValue = v.map(JLong(_)).getOrElse(JNothing)
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
  def fromJson(json: String): TtlRecord = {
    val record = JsonMethods.parse(json)
    def field(name: String): Option[JValue] = record \ name match {
      case JNothing | JNull => None
      case v => Some(v)
    }
    def wrong(name: String): Nothing = throw new IllegalArgumentException(s"field $name is missing or not of its type")
    def long(name: String): Option[Long] = field(name).map {
      case JInt(v) if v.isValidLong => v.toLong
      case JLong(v) => v
      case _ => wrong(name)
    }
    def string(name: String): Option[String] = field(name).map {
      case JString(v) => v
      case _ => wrong(name)
    }
    val histogram = field("histogram").map {
      case JArray(buckets) => buckets.map {
          case JArray(values) => values.map {
              case JInt(v) if v.isValidLong => v.toLong
              case JLong(v) => v
              case _ => wrong("histogram")
            }
          case _ => wrong("histogram")
        }
      case _ => wrong("histogram")
    }
    TtlRecord(
      ttlMs = long("ttlMs").getOrElse(wrong("ttlMs")),
      updateType = string("updateType").getOrElse(wrong("updateType")),
      stateVisibility = string("stateVisibility").getOrElse(wrong("stateVisibility")),
      timeCharacteristic = string("timeCharacteristic").getOrElse(wrong("timeCharacteristic")),
      eventTimeColumn = string("eventTimeColumn"),
      streamTimeMs = long("streamTimeMs"),
      histogramGranularityMs = long("histogramGranularityMs").getOrElse(wrong("histogramGranularityMs")),
      histogram = histogram.getOrElse(wrong("histogram")),
      countedFromMs = long("countedFromMs"),
      nowMs = long("nowMs"),
      legacyRows = long("legacyRows"),
      watermarkMs = long("watermarkMs"))
  }
}
