package io.ttlstore.ttl

/** How TTL stamps legacy rows, which carry no timestamp (`legacyRowTimestamp`). */
sealed abstract class LegacyRowTimestamp(val name: String) extends Named

object LegacyRowTimestamp {
  case object Migration extends LegacyRowTimestamp("migration")
  case object Unknown extends LegacyRowTimestamp("unknown")
  case object Expired extends LegacyRowTimestamp("expired")
  val all: Seq[LegacyRowTimestamp] = Seq(Migration, Unknown, Expired)

  /**
   * The timestamp legacy rows are judged by, and keep when upgraded. Pure. `migration` is the
   * adoption's processing time; in event time rows have no event time yet, so it is `unknown`.
   * Long.MaxValue never expires (the expiry rule saturates); Long.MinValue is always expired.
   */
  def stamp(policy: LegacyRowTimestamp, adoptedAtMs: Long, time: TimeCharacteristic): Long = policy match {
    case Migration if time == TimeCharacteristic.ProcessingTime => adoptedAtMs
    case Migration | Unknown => Long.MaxValue
    case Expired => Long.MinValue
  }
}
