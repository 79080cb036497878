package io.ttlstore.store.version

import io.ttlstore.ttl.{EventTimeColumn, ExpiryRule}

/**
 * The side channel between a `ttlstore_state` read ([[TtlStateSource]]) and the ttlstore store that
 * Spark's state reader opens under it in the same task thread. The read asks for expired rows or
 * not; the store says it served the read (`claimed`), with which TTL and "now" it judges, and the
 * timestamp of the row its iterator handed out last. Spark's state reader pulls one store row per
 * output row, so after each step `writtenAt` belongs to the row just read.
 *
 * One instance per partition reader; it lives in a thread-local only while that reader runs.
 */
final class RowTimes(val includeExpired: Boolean) {
  @volatile private[ttlstore] var claimed = false
  private[ttlstore] var ttlMs = 0L
  private[ttlstore] var now = Long.MinValue

  /** The stored timestamp of the row handed out last (processing time or event time, ms). */
  private[ttlstore] var writtenAt: Long = EventTimeColumn.NoTime

  /** Called by the store that serves the read, with the TTL and time it judges expiry by. */
  private[ttlstore] def claim(policyTtlMs: Long, judgedAt: Long): Unit = {
    claimed = true
    ttlMs = policyTtlMs
    now = judgedAt
  }

  def hasTime: Boolean = writtenAt != EventTimeColumn.NoTime
  def expiresAt: Option[Long] =
    if (ttlMs > 0 && hasTime) Some(ExpiryRule.expiresAt(writtenAt, ttlMs)) else None
  def expired: Boolean = hasTime && ExpiryRule.isExpired(writtenAt, ttlMs, now)
}

object RowTimes {
  private val current = new ThreadLocal[RowTimes]

  /** The read asking in this thread, if any. */
  def get: Option[RowTimes] = Option(current.get())

  /** Runs `f` with `times` asking in this thread. */
  def during[T](times: RowTimes)(f: => T): T = {
    val previous = current.get()
    current.set(times)
    try f
    finally current.set(previous)
  }
}
