package io.ttlstore.config

import java.util.Locale

import io.ttlstore.compat.Parse

/**
 * What a setting's value may be: the one description that a setting's parser, its `allowed` text (in
 * errors and docs/configuration.md) and the Python package's checks (python/ttlstore/settings.json,
 * written from it by [[PythonSettings]] at build time) all come from.
 */
sealed trait ValueForm {

  /** The allowed values in words, as errors and the configuration reference say them. */
  def allowed: String
}

object ValueForm {

  case object Flag extends ValueForm {
    val allowed = "true or false"
    def parse(s: String): Option[Boolean] = Parse.boolean(s.toLowerCase(Locale.ROOT))
  }

  /** A whole number in `[min, max]`, of `unit` where it has one. */
  final case class Whole(min: Long, max: Long, unit: Option[String] = None) extends ValueForm {
    def allowed: String = s"a whole number${unit.fold("")(u => s" of $u")} from $min to $max"
    def parse(s: String): Option[Long] = Parse.long(s).filter(v => v >= min && v <= max)
  }

  /** A number in `[min, max]`. */
  final case class Fraction(min: Double, max: Double) extends ValueForm {
    def allowed: String = s"a number from ${text(min)} to ${text(max)}"
    def parse(s: String): Option[Double] = Parse.double(s).filter(v => v >= min && v <= max)
  }

  /** One of `names`, matched case-insensitively; the parse answers the name as declared. */
  final case class OneOf(names: Seq[String]) extends ValueForm {
    def allowed: String = names.mkString("one of ", ", ", "")
    def parse(s: String): Option[String] = names.find(_.equalsIgnoreCase(s))
  }

  /** A duration in words or milliseconds (see [[io.ttlstore.ttl.Durations]]); `zero` says what 0 means. */
  final case class Duration(zero: String) extends ValueForm {
    def allowed: String = io.ttlstore.ttl.Durations.allowed(zero)
  }

  /** Any text its setting's own parser accepts, described by `allowed`. */
  final case class Text(allowed: String) extends ValueForm

  private def text(d: Double): String = if (d == math.rint(d)) d.toLong.toString else d.toString
}
