package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors

/** A scoped key as the user wrote it: which operator (and store) it targets, and which setting. */
final case class ScopedKey(key: String, operatorId: Long, storeName: Option[String], setting: ConfigKey[_])

/**
 * Scoped setting names: `<name>` (every store), `operator.<id>.<name>` (one operator's stores),
 * `operator.<id>.store.<storeName>.<name>` (one store), all under [[ConfigKey.Prefix]].
 */
object ConfigScope {
  private val OperatorKey = """operator\.(\d+)\.([A-Za-z.]+)""".r
  private val StoreKey = """operator\.(\d+)\.store\.([^.]+)\.([A-Za-z.]+)""".r

  /** The key that sets `key` for `scope` (the global key when none is set). */
  def setBy(key: ConfigKey[_], confs: Map[String, String], scope: StoreScope): String =
    key.candidates(scope).find(confs.contains).getOrElse(key.key)

  /** Every operator- or store-scoped key set in `confs` (for the driver's check of operator ids). */
  def scopedKeys(confs: Map[String, String]): Seq[ScopedKey] =
    confs.keys.toSeq.sorted.flatMap { k =>
      if (!k.startsWith(ConfigKey.Prefix)) None
      else k.stripPrefix(ConfigKey.Prefix) match {
        case StoreKey(op, store, name) => scopedSetting(name).map(ScopedKey(k, op.toLong, Some(store), _))
        case OperatorKey(op, name) => scopedSetting(name).map(ScopedKey(k, op.toLong, None, _))
        case _ => None
      }
    }

  /**
   * Fails on a Spark state store key that is one of ttlstore's settings written without the
   * `ttlstore.` segment (`spark.sql.streaming.stateStore.ttl`): Spark would ignore it silently.
   */
  def checkUnprefixed(confs: Map[String, String]): Unit =
    confs.keys.toSeq.sorted.foreach { k =>
      if (k.startsWith(ConfigKey.SparkStatePrefix) && !k.startsWith(ConfigKey.Prefix)) {
        val rest = k.stripPrefix(ConfigKey.SparkStatePrefix)
        val scopedRest = rest match {
          case StoreKey(_, _, name) => Some(name)
          case OperatorKey(_, name) => Some(name)
          case _ => None
        }
        val named = TtlStoreConfig.all.find(c =>
          c.name.equalsIgnoreCase(rest) ||
            (c.scoped && scopedRest.exists(_.equalsIgnoreCase(c.name))))
        named.foreach(c => throw TtlStoreErrors.unprefixedSetting(k, ConfigKey.Prefix + rest))
      }
    }

  /** Fails on the first key under our prefix that names no setting (or scopes an unscoped one). */
  def checkKeys(confs: Map[String, String]): Unit = {
    checkUnprefixed(confs)
    val global = TtlStoreConfig.all.map(_.key).toSet ++ TestHooks.keys
    val scoped = scopedKeys(confs).map(_.key).toSet
    confs.keys.filter(k => k.startsWith(ConfigKey.Prefix) && !global(k) && !scoped(k))
      .toSeq.sorted.headOption.foreach { k =>
        throw TtlStoreErrors.unknownConfig(k, TtlStoreConfig.all.map(_.key),
          TtlStoreConfig.all.filter(_.scoped).map(_.name))
      }
  }

  private def scopedSetting(name: String): Option[ConfigKey[_]] =
    TtlStoreConfig.all.find(k => k.scoped && k.name == name)
}
