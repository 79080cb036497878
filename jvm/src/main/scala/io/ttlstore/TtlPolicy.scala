package io.ttlstore

import java.util.Locale

/** A value of one of the TTL enums, written in settings and records by its name. */
trait Named { def name: String }

/** When a row's timestamp is renewed (Flink's `StateTtlConfig.UpdateType`). */
sealed abstract class UpdateType(val name: String) extends Named
object UpdateType {
  /** Written rows get the current time; reads leave it alone. */
  case object OnCreateAndWrite extends UpdateType("OnCreateAndWrite")
  /** Point reads in write stores renew the timestamp too. */
  case object OnReadAndWrite extends UpdateType("OnReadAndWrite")
  val all: Seq[UpdateType] = Seq(OnCreateAndWrite, OnReadAndWrite)
}

/** Whether an expired row that is still stored is returned (Flink's `StateVisibility`). */
sealed abstract class StateVisibility(val name: String) extends Named
object StateVisibility {
  case object NeverReturnExpired extends StateVisibility("NeverReturnExpired")
  case object ReturnExpiredIfNotCleanedUp extends StateVisibility("ReturnExpiredIfNotCleanedUp")
  val all: Seq[StateVisibility] = Seq(NeverReturnExpired, ReturnExpiredIfNotCleanedUp)
}

/** What "time" means: the wall clock, or the event times of the rows themselves. */
sealed abstract class TimeCharacteristic(val name: String) extends Named
object TimeCharacteristic {
  case object ProcessingTime extends TimeCharacteristic("ProcessingTime")
  case object EventTime extends TimeCharacteristic("EventTime")
  val all: Seq[TimeCharacteristic] = Seq(ProcessingTime, EventTime)
}

/**
 * The TTL settings in force for one store. `ttlMs == 0` means TTL is off: rows still carry their
 * timestamps (so TTL can be enabled later), nothing expires.
 */
final case class TtlPolicy(
    ttlMs: Long,
    updateType: UpdateType,
    visibility: StateVisibility,
    timeCharacteristic: TimeCharacteristic,
    eventTimeColumn: Option[String]) {

  def enabled: Boolean = ttlMs > 0

  def returnsExpired: Boolean = visibility == StateVisibility.ReturnExpiredIfNotCleanedUp

  def refreshesOnRead: Boolean = enabled && updateType == UpdateType.OnReadAndWrite

  override def toString: String =
    if (!enabled) s"TTL off (${timeCharacteristic.name} timestamps)"
    else s"TTL ${Durations.format(ttlMs)}, ${updateType.name}, ${visibility.name}, " +
      s"${timeCharacteristic.name}${eventTimeColumn.map(c => s" of $c").getOrElse("")}"
}

object TtlPolicy {
  val Off: TtlPolicy = TtlPolicy(0L, UpdateType.OnCreateAndWrite, StateVisibility.NeverReturnExpired,
    TimeCharacteristic.ProcessingTime, None)

  /** Case-insensitive lookup of an enum value by its name. */
  def named[T <: Named](values: Seq[T])(s: String): Option[T] =
    values.find(v => v.name.toLowerCase(Locale.ROOT) == s.toLowerCase(Locale.ROOT))
}

/** Durations as users write them: `"10 minutes"`, `"30s"`, `"1h"`, `"1500"` (milliseconds). Pure. */
object Durations {
  private val Pattern = """(?i)^\s*(\d+)\s*([a-z]*)\s*$""".r
  private val units: Seq[(Seq[String], Long)] = Seq(
    Seq("", "ms", "milli", "millis", "millisecond", "milliseconds") -> 1L,
    Seq("s", "sec", "secs", "second", "seconds") -> 1000L,
    Seq("m", "min", "mins", "minute", "minutes") -> 60000L,
    Seq("h", "hour", "hours") -> 3600000L,
    Seq("d", "day", "days") -> 86400000L)

  val allowed: String = "a non-negative duration such as \"10 minutes\", \"30s\", \"1h\", \"2 days\" " +
    "or a number of milliseconds; 0 turns TTL off"

  /** Milliseconds, or None if `s` is not a non-negative duration that fits in a long. */
  def parseMillis(s: String): Option[Long] = s match {
    case Pattern(amount, unit) =>
      for {
        n <- amount.toLongOption
        factor <- units.collectFirst { case (names, f) if names.contains(unit.toLowerCase(Locale.ROOT)) => f }
        if n <= Long.MaxValue / factor
      } yield n * factor
    case _ => None
  }

  /** The shortest exact rendering: `600000` -> `10 minutes`. */
  def format(ms: Long): String = {
    val named = Seq(86400000L -> "day", 3600000L -> "hour", 60000L -> "minute", 1000L -> "second")
    named.collectFirst { case (f, n) if ms >= f && ms % f == 0 =>
      val k = ms / f
      s"$k $n${if (k == 1) "" else "s"}"
    }.getOrElse(s"$ms ms")
  }
}
