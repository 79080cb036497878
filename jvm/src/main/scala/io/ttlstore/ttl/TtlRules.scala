package io.ttlstore.ttl

/**
 * The TTL rules of one store version at its fixed "now", as pure decisions (Flink's TTL decorator
 * idea): which stored rows are expired, which reads hide, and the timestamp a read leaves a visible
 * row with. With TTL off nothing expires and nothing is renewed. No clock, no I/O.
 */
final class TtlRules(val policy: TtlPolicy, val now: Long) {
  val enabled: Boolean = policy.enabled

  /** True if a row stamped `ts` is expired (`ts + ttl <= now`, see [[ExpiryRule]]). */
  def isExpired(ts: Long): Boolean = enabled && ExpiryRule.isExpired(ts, policy.ttlMs, now)

  /** True if reads step over a row stamped `ts`: expired, and the visibility hides expired rows. */
  def hides(ts: Long): Boolean = isExpired(ts) && !policy.returnsExpired

  /** The timestamp a read leaves a visible row stamped `ts` with: renewed by OnReadAndWrite, never older. */
  def afterRead(ts: Long): Long = if (policy.refreshesOnRead) math.max(ts, now) else ts
}
