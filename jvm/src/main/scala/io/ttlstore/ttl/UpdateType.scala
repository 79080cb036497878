package io.ttlstore.ttl

/** When a row's timestamp is renewed (Flink's `StateTtlConfig.UpdateType`). */
sealed abstract class UpdateType(val name: String) extends Named
object UpdateType {

  /** Written rows get the current time; reads leave it alone. */
  case object OnCreateAndWrite extends UpdateType("OnCreateAndWrite")

  /** Point reads in write stores renew the timestamp too. */
  case object OnReadAndWrite extends UpdateType("OnReadAndWrite")
  val all: Seq[UpdateType] = Seq(OnCreateAndWrite, OnReadAndWrite)
}
