package io.ttlstore.checkpoint

import org.json4s.{JArray, JInt, JLong, JNothing, JNull, JObject, JString, JValue}

/**
 * The fields of one JSON object of ttlstore's files, read and written through json4s's tree. Not
 * through its reflection, which reads a case class's Scala signature on first use: 0.4 s per task
 * in a query's first commit, and again in its first load. Absent and null fields read as None; a
 * field of the wrong type fails naming it.
 */
final class JsonFields(obj: JValue) {
  def optional(name: String): Option[JValue] = obj \ name match {
    case JNothing | JNull => None
    case v => Some(v)
  }

  def long(name: String): Option[Long] = optional(name).map(JsonFields.long(name))

  def int(name: String): Option[Int] = long(name).map { v =>
    if (v.isValidInt) v.toInt else JsonFields.wrong(name)
  }

  def string(name: String): Option[String] = optional(name).map {
    case JString(v) => v
    case _ => JsonFields.wrong(name)
  }

  def array(name: String): Option[List[JValue]] = optional(name).map {
    case JArray(values) => values
    case _ => JsonFields.wrong(name)
  }

  def required[T](name: String, read: String => Option[T]): T = read(name).getOrElse(JsonFields.wrong(name))
}

object JsonFields {
  def wrong(name: String): Nothing = throw new IllegalArgumentException(s"field $name is missing or not of its type")

  def long(name: String)(v: JValue): Long = v match {
    case JInt(i) if i.isValidLong => i.toLong
    case JLong(l) => l
    case _ => wrong(name)
  }

  /** An object of the fields that have a value (JNothing: left out). */
  def obj(fields: (String, JValue)*): JObject = JObject(fields.filter(_._2 != JNothing).toList)

  def opt[T](v: Option[T])(f: T => JValue): JValue = v.map(f).getOrElse(JNothing)
}
