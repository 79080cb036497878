package io.ttlstore.config

import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.ttl.{Named, TtlPolicy}

/**
 * One setting: its name under [[ConfigKey.Prefix]], default, documentation and parser.
 * A `scoped` setting may also be set per operator and per store of an operator (see [[ConfigScope]]).
 */
final case class ConfigKey[T](
    name: String,
    default: T,
    doc: String,
    form: ValueForm,
    parse: String => Option[T],
    scoped: Boolean = false) {

  def key: String = ConfigKey.Prefix + name

  /** The allowed values in words (see [[ValueForm]]). */
  def allowed: String = form.allowed

  def defaultText: String = (default: Any) match {
    case s: String if s.isEmpty => "(unset)"
    case None => "(unset)"
    case Some(v) => String.valueOf(v)
    case n: Named => n.name
    case other => String.valueOf(other)
  }

  /** The value set in `confs`, or the default; a value that does not parse fails naming the key. */
  def readFrom(confs: Map[String, String]): T = confs.get(key) match {
    case None => default
    case Some(raw) => parseAt(key, raw)
  }

  /** The value for a store: the most specific of store, operator and global settings wins. */
  def resolve(confs: Map[String, String], scope: StoreScope): Resolved[T] =
    candidates(scope).collectFirst {
      case k if confs.contains(k) => Resolved(parseAt(k, confs(k)), Some(k))
    }.getOrElse(Resolved(default, None))

  /** The keys that may set this setting for `scope`, most specific first (see [[ConfigScope]]). */
  def candidates(scope: StoreScope): Seq[String] =
    if (!scoped) Seq(key)
    else Seq(
      s"${ConfigKey.Prefix}operator.${scope.operatorId}.store.${scope.storeName}.$name",
      s"${ConfigKey.Prefix}operator.${scope.operatorId}.$name",
      key)

  def parseAt(fullKey: String, raw: String): T =
    parse(raw.trim).getOrElse(throw TtlStoreErrors.invalidConfig(fullKey, raw, allowed))
}

object ConfigKey {

  /** A setting that is true or false. */
  def flag(name: String, default: Boolean, doc: String, scoped: Boolean = false): ConfigKey[Boolean] =
    ConfigKey(name, default, doc, ValueForm.Flag, ValueForm.Flag.parse, scoped)

  /** A whole number in `form`'s range, as a Long. */
  def long(name: String, default: Long, doc: String, form: ValueForm.Whole): ConfigKey[Long] =
    ConfigKey(name, default, doc, form, form.parse)

  /** A whole number in `form`'s range, which an Int holds. */
  def int(name: String, default: Int, doc: String, form: ValueForm.Whole): ConfigKey[Int] = {
    require(form.min >= Int.MinValue && form.max <= Int.MaxValue, s"$name: $form does not fit an Int")
    ConfigKey(name, default, doc, form, form.parse(_).map(_.toInt))
  }

  /** Whether stores use an optional native part: auto, true or false ([[NativeMode]]). */
  def nativeMode(name: String, default: NativeMode, doc: String): ConfigKey[NativeMode] =
    ConfigKey(name, default, doc, ValueForm.OneOf(NativeMode.all.map(_.name)),
      TtlPolicy.named(NativeMode.all))

  /** A number in `form`'s range. */
  def double(name: String, default: Double, doc: String, form: ValueForm.Fraction): ConfigKey[Double] =
    ConfigKey(name, default, doc, form, form.parse)

  /**
   * Spark passes a provider every explicitly set session conf that starts with
   * `spark.sql.streaming.stateStore.`; ours live one level below, so a typo in one of them is
   * caught instead of being ignored.
   */
  val Prefix = "spark.sql.streaming.stateStore.ttlstore."

  /** Spark's own state store settings, ours among them. */
  val SparkStatePrefix = "spark.sql.streaming.stateStore."

  /** The provider a query runs on (Spark pins it in the checkpoint's offset log). */
  val SparkProviderKey = "spark.sql.streaming.stateStore.providerClass"

  /** Spark's setting of the checkpoint format (1, or 2 with checkpoint ids). */
  val SparkCheckpointFormatKey = "spark.sql.streaming.stateStore.checkpointFormatVersion"

  /** ttlstore's provider class, as Spark's offset log pins it (io.ttlstore.TtlStateStoreProvider). */
  val ProviderClass = "io.ttlstore.TtlStateStoreProvider"
}

/** A resolved value and the key that set it (None: the default). */
final case class Resolved[T](value: T, setBy: Option[String])
