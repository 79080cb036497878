package io.ttlstore.compat

/** A string's number or boolean, or None: Scala 2.13's `toLongOption` and kin, by one name on every Scala. */
object Parse {
  def int(s: String): Option[Int] = s.toIntOption
  def long(s: String): Option[Long] = s.toLongOption
  def double(s: String): Option[Double] = s.toDoubleOption
  def boolean(s: String): Option[Boolean] = s.toBooleanOption
}
