package io.ttlstore.ttl

/** What "time" means: the wall clock, or the event times of the rows themselves. */
sealed abstract class TimeCharacteristic(val name: String) extends Named
object TimeCharacteristic {
  case object ProcessingTime extends TimeCharacteristic("ProcessingTime")
  case object EventTime extends TimeCharacteristic("EventTime")
  val all: Seq[TimeCharacteristic] = Seq(ProcessingTime, EventTime)
}
