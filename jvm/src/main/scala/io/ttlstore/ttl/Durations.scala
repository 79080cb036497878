package io.ttlstore.ttl

import java.util.Locale

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
    named.collectFirst {
      case (f, n) if ms >= f && ms % f == 0 =>
        val k = ms / f
        s"$k $n${if (k == 1) "" else "s"}"
    }.getOrElse(s"$ms ms")
  }
}
