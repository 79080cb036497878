package io.ttlstore.ttl

/** Where "now" comes from. Injected, so that tests drive time instead of sleeping. */
trait Clock {
  def millis(): Long
}

object SystemClock extends Clock {
  override def millis(): Long = System.currentTimeMillis()
}

/** A clock that moves only when told to; for tests. */
final class ManualClock(@volatile private var now: Long = 0L) extends Clock {
  override def millis(): Long = now
  def set(millis: Long): Unit = now = millis
  def advance(millis: Long): Unit = now += millis
}
