package io.ttlstore.store.version

/** Where one opened store version is in its life; only `Updating` accepts changes. */
sealed trait StoreLifecycle {
  def name: String
}

object StoreLifecycle {
  case object Updating extends StoreLifecycle { val name = "updating" }
  case object Committed extends StoreLifecycle { val name = "committed" }
  case object Aborted extends StoreLifecycle { val name = "aborted" }
  case object Released extends StoreLifecycle { val name = "released" }
}
