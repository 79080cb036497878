package io.ttlstore.config

import io.ttlstore.compat.Parse

/**
 * What ttlstore's own tests and benchmarks inject into the stores of a query that Spark schedules, which
 * can be handed nothing but configuration: a fixed processing-time clock, another native library
 * resource, a leak a soak must find, RocksDB's statistics for a read profile. Internal: the keys live under [[TestHooks.Prefix]], outside the settings table
 * ([[TtlStoreConfig.all]]), so neither `docs/configuration.md` nor Python's options name them and the
 * unknown-key error never offers them. A JVM test hands a provider its clock through the provider's
 * constructor instead, as Flink's tests hand a TTL state their `TtlTimeProvider`.
 *
 * @param clockMs the processing time, in epoch milliseconds, every store of the query judges and stamps
 *   by instead of the batch's timestamp
 * @param nativeFilterResource the jar resource the native filter loads from instead of this platform's
 *   (a missing one plays a platform without the library)
 * @param leak a native resource every store load leaks: `iterator` (a RocksDB iterator never closed),
 *   `store` (a RocksDB instance opened and never closed), or none
 * @param rocksDbStatistics whether every store of this JVM counts its reads in RocksDB's statistics
 *   ([[io.ttlstore.store.rocksdb.ReadStatistics]], read by bench/read_profile.py)
 */
final case class TestHooks(clockMs: Option[Long], nativeFilterResource: Option[String], leak: Option[String],
    rocksDbStatistics: Boolean = false)

object TestHooks {
  val Prefix: String = ConfigKey.Prefix + "testHook."

  val ClockMs: ConfigKey[Option[Long]] =
    ConfigKey("testHook.clockMs", None, "", ValueForm.Text("epoch milliseconds"), s => Parse.long(s).map(Some(_)))
  val NativeFilterResource: ConfigKey[Option[String]] =
    ConfigKey("testHook.nativeFilterResource", None, "", ValueForm.Text("a resource path"), s => Some(Some(s)))
  val Leak: ConfigKey[Option[String]] =
    ConfigKey("testHook.leak", None, "", ValueForm.Text("iterator or store"),
      s => Some(s).filter(Set("iterator", "store")).map(Some(_)))

  val RocksDbStatistics: ConfigKey[Boolean] =
    ConfigKey.flag("testHook.rocksdbStatistics", default = false, "")

  val all: Seq[ConfigKey[_]] = Seq(ClockMs, NativeFilterResource, Leak, RocksDbStatistics)

  /** No hook: what every store outside ttlstore's tests runs with. */
  val Off: TestHooks = TestHooks(None, None, None)

  def parse(confs: Map[String, String]): TestHooks =
    TestHooks(ClockMs.readFrom(confs), NativeFilterResource.readFrom(confs), Leak.readFrom(confs),
      RocksDbStatistics.readFrom(confs))
}
