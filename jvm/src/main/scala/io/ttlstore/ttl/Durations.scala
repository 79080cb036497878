package io.ttlstore.ttl

import java.util.Locale

import io.ttlstore.compat.Parse

/**
 * Durations as users write them, in the words Spark's intervals use: `"10 minutes"`, `"30s"`,
 * `"1 hour 30 minutes"`, `"interval 1 week"`, or `"1500"` (milliseconds, alone). Months and years
 * are refused (they have no fixed length). Pure. Python's `duration_ms` reads the same grammar; the
 * examples in `golden/durations.tsv` hold both to it.
 */
object Durations {

  /** One `<amount><unit>` part, spaces allowed around the unit. */
  private val Part = """(\d+)\s*([a-z]*)\s*""".r
  private val units: Seq[(Seq[String], Long)] = Seq(
    Seq("", "ms", "milli", "millis", "millisecond", "milliseconds") -> 1L,
    Seq("s", "sec", "secs", "second", "seconds") -> 1000L,
    Seq("m", "min", "mins", "minute", "minutes") -> 60000L,
    Seq("h", "hour", "hours") -> 3600000L,
    Seq("d", "day", "days") -> 86400000L,
    Seq("w", "week", "weeks") -> 604800000L)

  /** What a duration setting accepts; `zero` says what 0 means for it. */
  def allowed(zero: String): String = "a non-negative duration such as \"10 minutes\", \"30s\", " +
    "\"1 hour 30 minutes\", \"interval 1 week\" or a number of milliseconds; 0 " + zero

  /** Milliseconds, or None if `s` is not a non-negative duration that fits in a long. */
  def parseMillis(s: String): Option[Long] = {
    val lower = s.trim.toLowerCase(Locale.ROOT)
    val text = if (lower.startsWith("interval ")) lower.stripPrefix("interval").trim else lower
    var pos = 0
    var parts = List.empty[(String, String)]
    var matched = true
    while (matched && pos < text.length) {
      Part.findPrefixMatchOf(text.substring(pos)) match {
        case Some(m) => parts ::= (m.group(1) -> m.group(2)); pos += m.end
        case None => matched = false
      }
    }
    // A bare number means milliseconds only alone: "1 hour 30" is refused, not guessed.
    if (!matched || parts.isEmpty || (parts.size > 1 && parts.exists(_._2.isEmpty))) None
    else parts.reverse.foldLeft(Option(0L)) { case (total, (amount, unit)) =>
      for {
        sum <- total
        n <- Parse.long(amount)
        factor <- units.collectFirst { case (names, f) if names.contains(unit) => f }
        if n <= (Long.MaxValue - sum) / factor
      } yield sum + n * factor
    }
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
