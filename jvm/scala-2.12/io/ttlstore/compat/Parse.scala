package io.ttlstore.compat

import scala.util.Try

/** A string's number or boolean, or None: what Scala 2.13's `toLongOption` and kin answer, on Scala 2.12. */
object Parse {
  def int(s: String): Option[Int] = Try(s.toInt).toOption
  def long(s: String): Option[Long] = Try(s.toLong).toOption
  def double(s: String): Option[Double] = Try(s.toDouble).toOption
  def boolean(s: String): Option[Boolean] = Try(s.toBoolean).toOption
}
