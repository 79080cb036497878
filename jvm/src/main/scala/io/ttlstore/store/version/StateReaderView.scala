package io.ttlstore.store.version

import io.ttlstore.checkpoint.TtlRecord
import io.ttlstore.ttl.{StateVisibility, TimeCharacteristic, TtlPolicy}

/**
 * How a version looks to Spark's state reader: as the query left it, judged with the TTL settings
 * and the time recorded with the version (its processing-time "now", or in event time its stream
 * time), whatever TTL the reading session sets. Under a `ttlstore_state` read ([[RowTimes]]) the
 * version also tells each row's timestamp, and shows expired rows if the read asks for them.
 */
object StateReaderView {

  /**
   * The settings a reader's version opens with, from the query's `base`; None when the reader sees
   * the version as the query would (no record, no `ttlstore_state` read).
   */
  def of(base: VersionSettings, recorded: Option[TtlRecord]): Option[VersionSettings] = {
    val view = recordedView(recorded)
    val times = RowTimes.get
    if (view.isEmpty && times.isEmpty) None
    else {
      val (policy, now) = view.getOrElse((base.policy, base.now))
      Some(times match {
        case Some(t) =>
          t.claim(policy.ttlMs, now)
          val shown =
            if (t.includeExpired) policy.copy(visibility = StateVisibility.ReturnExpiredIfNotCleanedUp) else policy
          base.copy(now = now, policy = shown, rowTimes = Some(t))
        case None => base.copy(now = now, policy = policy)
      })
    }
  }

  /** The TTL settings recorded with a version and the time it was written at. */
  private def recordedView(recorded: Option[TtlRecord]): Option[(TtlPolicy, Long)] = for {
    record <- recorded
    policy <- record.policy
    now <- record.judgedAtMs.orElse(
      if (policy.timeCharacteristic == TimeCharacteristic.EventTime) Some(Long.MinValue) else None)
  } yield (policy, now)
}
