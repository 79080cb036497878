package io.ttlstore.ttl

import java.util.Locale

/**
 * The TTL settings in force for one store. `ttlMs == 0` means TTL is off: rows still carry their
 * timestamps (so TTL can be enabled later), nothing expires.
 */
final case class TtlPolicy(
    ttlMs: Long,
    updateType: UpdateType,
    visibility: StateVisibility,
    timeCharacteristic: TimeCharacteristic,
    eventTimeColumn: Option[String]) {

  def enabled: Boolean = ttlMs > 0

  def returnsExpired: Boolean = visibility == StateVisibility.ReturnExpiredIfNotCleanedUp

  def refreshesOnRead: Boolean = enabled && updateType == UpdateType.OnReadAndWrite

  override def toString: String =
    if (!enabled) s"TTL off (${timeCharacteristic.name} timestamps)"
    else s"TTL ${Durations.format(ttlMs)}, ${updateType.name}, ${visibility.name}, " +
      s"${timeCharacteristic.name}${eventTimeColumn.map(c => s" of $c").getOrElse("")}"
}

object TtlPolicy {
  val Off: TtlPolicy = TtlPolicy(0L, UpdateType.OnCreateAndWrite, StateVisibility.NeverReturnExpired,
    TimeCharacteristic.ProcessingTime, None)

  /** Case-insensitive lookup of an enum value by its name. */
  def named[T <: Named](values: Seq[T])(s: String): Option[T] =
    values.find(v => v.name.toLowerCase(Locale.ROOT) == s.toLowerCase(Locale.ROOT))
}
