package io.ttlstore.ttl

/**
 * The one expiry rule, shared in spirit with the native filter: a row whose timestamp is `ts` is
 * expired at `now` when `ts + ttl <= now`. The sum saturates instead of overflowing (Flink caps the
 * TTL at `Long.MaxValue - ts`, and so do we), so a huge TTL means "not before the end of time".
 * `ttl <= 0` means TTL is off.
 * Pure: no clock, no I/O.
 */
object ExpiryRule {

  /** The first instant at which a row stamped `ts` is expired; Long.MaxValue when never. */
  def expiresAt(ts: Long, ttlMs: Long): Long =
    if (ttlMs <= 0) Long.MaxValue
    else if (ts > Long.MaxValue - ttlMs) Long.MaxValue
    else ts + ttlMs

  def isExpired(ts: Long, ttlMs: Long, now: Long): Boolean =
    ttlMs > 0 && expiresAt(ts, ttlMs) <= now
}
