package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors

/**
 * Stream-stream join stores. Spark's join (state format 2, the one third-party providers get) keeps
 * per side a `keyToNumValues` count store and a `keyWithIndexToValue` index store that must agree:
 * expiring rows of one and not the other breaks the join's invariants, so TTL is refused there
 * unless the user accepts the risk.
 */
object StreamStreamJoin {
  val StoreNames: Seq[String] =
    for (side <- Seq("left", "right"); kind <- Seq("keyToNumValues", "keyWithIndexToValue"))
      yield s"$side-$kind"

  def isJoinStore(storeName: String): Boolean = StoreNames.contains(storeName)

  /**
   * Refuses `settings` for the store `scope` names if they give a join store TTL without the
   * override; `where` names the store in the error.
   */
  def checkTtl(settings: TtlStoreSettings, confs: Map[String, String], scope: StoreScope,
      where: String): Unit =
    if (settings.ttl.enabled && isJoinStore(scope.storeName) && !settings.allowTtlOnStreamStreamJoin) {
      throw TtlStoreErrors.ttlOnStreamStreamJoin(where, ConfigScope.setBy(TtlStoreConfig.Ttl, confs, scope),
        TtlStoreConfig.AllowTtlOnStreamStreamJoin.key)
    }
}
