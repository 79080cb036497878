package io.ttlstore

/** Which store a setting is resolved for: Spark's operator id and store name. */
final case class StoreScope(operatorId: Long, storeName: String)

object StoreScope {
  val Default: StoreScope = StoreScope(0L, "default")
}

/** A scoped key as the user wrote it: which operator (and store) it targets, and which setting. */
final case class ScopedKey(key: String, operatorId: Long, storeName: Option[String], setting: ConfigKey[_])

/**
 * Scoped setting names: `<name>` (every store), `operator.<id>.<name>` (one operator's stores),
 * `operator.<id>.store.<storeName>.<name>` (one store), all under [[TtlStoreConfig.Prefix]].
 */
object ConfigScope {
  private val OperatorKey = """operator\.(\d+)\.([A-Za-z.]+)""".r
  private val StoreKey = """operator\.(\d+)\.store\.([^.]+)\.([A-Za-z.]+)""".r

  /** The keys that may set `key` for `scope`, most specific first. */
  def candidates(key: ConfigKey[_], scope: StoreScope): Seq[String] =
    if (!key.scoped) Seq(key.key)
    else Seq(
      s"${TtlStoreConfig.Prefix}operator.${scope.operatorId}.store.${scope.storeName}.${key.name}",
      s"${TtlStoreConfig.Prefix}operator.${scope.operatorId}.${key.name}",
      key.key)

  /** The key that sets `key` for `scope` (the global key when none is set). */
  def setBy(key: ConfigKey[_], confs: Map[String, String], scope: StoreScope): String =
    candidates(key, scope).find(confs.contains).getOrElse(key.key)

  /** Every operator- or store-scoped key set in `confs` (for the driver's check of operator ids). */
  def scopedKeys(confs: Map[String, String]): Seq[ScopedKey] =
    confs.keys.toSeq.sorted.flatMap { k =>
      if (!k.startsWith(TtlStoreConfig.Prefix)) None
      else k.stripPrefix(TtlStoreConfig.Prefix) match {
        case StoreKey(op, store, name) => scopedSetting(name).map(ScopedKey(k, op.toLong, Some(store), _))
        case OperatorKey(op, name) => scopedSetting(name).map(ScopedKey(k, op.toLong, None, _))
        case _ => None
      }
    }

  /** Fails on the first key under our prefix that names no setting (or scopes an unscoped one). */
  def checkKeys(confs: Map[String, String]): Unit = {
    val global = TtlStoreConfig.all.map(_.key).toSet
    val scoped = scopedKeys(confs).map(_.key).toSet
    confs.keys.filter(k => k.startsWith(TtlStoreConfig.Prefix) && !global(k) && !scoped(k))
      .toSeq.sorted.headOption.foreach { k =>
        throw TtlStoreErrors.unknownConfig(k, TtlStoreConfig.all.map(_.key),
          TtlStoreConfig.all.filter(_.scoped).map(_.name))
      }
  }

  private def scopedSetting(name: String): Option[ConfigKey[_]] =
    TtlStoreConfig.all.find(k => k.scoped && k.name == name)
}
