package io.ttlstore.ttl

/** Whether an expired row that is still stored is returned (Flink's `StateVisibility`). */
sealed abstract class StateVisibility(val name: String) extends Named
object StateVisibility {
  case object NeverReturnExpired extends StateVisibility("NeverReturnExpired")
  case object ReturnExpiredIfNotCleanedUp extends StateVisibility("ReturnExpiredIfNotCleanedUp")
  val all: Seq[StateVisibility] = Seq(NeverReturnExpired, ReturnExpiredIfNotCleanedUp)
}
