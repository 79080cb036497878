package io.ttlstore.config

import java.io.File
import java.util.ServiceLoader

/**
 * What ttlstore's own tests and benchmarks hand the stores of a query that Spark schedules (which can be
 * handed nothing but configuration and jars): a fixed processing-time clock, another native library
 * resource, a leak a soak must find, RocksDB's statistics for a read profile. The product never reads
 * them from a setting: a [[TestHookSource]] does, and only a test module ships one (the testkit jar,
 * `jvm/src/testkit`, found through `java.util.ServiceLoader`). Without it every store runs with [[TestHooks.Off]].
 * A JVM test hands a provider its clock through the provider's constructor instead, as Flink's tests
 * hand a TTL state their `TtlTimeProvider`.
 *
 * @param clockMs the processing time, in epoch milliseconds, every store of the query judges and stamps
 *   by instead of the batch's timestamp
 * @param nativeFilterResource the jar resource the native filter loads from instead of this platform's
 *   (a missing one plays a platform without the library)
 * @param afterLoad what runs after every load of a store, given its working directory (a soak's leak)
 * @param rocksDbStatistics whether every store of this JVM counts its reads in RocksDB's statistics
 *   ([[io.ttlstore.store.rocksdb.ReadStatistics]], read by bench/read_profile.py)
 * @param readAheadKey what each key read ahead becomes before it is read: itself, another key (a wrong guess),
 *   null (not read), or a throw (a read that fails)
 */
final case class TestHooks(clockMs: Option[Long] = None, nativeFilterResource: Option[String] = None,
    afterLoad: File => Unit = TestHooks.NothingAfterLoad, rocksDbStatistics: Boolean = false,
    readAheadKey: Array[Byte] => Array[Byte] = TestHooks.SameKey)

/** Reads [[TestHooks]] from a query's settings: implemented by the testkit alone. */
trait TestHookSource {

  /** The keys it reads (under `spark.sql.streaming.stateStore.ttlstore.`), which are then no unknown settings. */
  def keys: Set[String]

  /** The hooks `confs` ask for. */
  def hooks(confs: Map[String, String]): TestHooks
}

object TestHooks {

  /** Nothing to do after a load (one value, so that settings without hooks compare equal). */
  val NothingAfterLoad: File => Unit = _ => ()

  /** Each key read ahead as it is (one value, so that settings without hooks compare equal). */
  val SameKey: Array[Byte] => Array[Byte] = k => k

  /** No hook: what every store outside ttlstore's tests runs with. */
  val Off: TestHooks = TestHooks()

  /** The test module's source of hooks, if one is on the class path of ttlstore's classes. */
  lazy val source: Option[TestHookSource] = {
    val found = ServiceLoader.load(classOf[TestHookSource], classOf[TestHookSource].getClassLoader).iterator()
    if (found.hasNext) Some(found.next()) else None
  }

  /** The hooks `confs` ask for, where a test module reads them; else [[Off]]. */
  def from(confs: Map[String, String]): TestHooks = source.fold(Off)(_.hooks(confs))

  /** The keys the test module reads (none without one). */
  def keys: Set[String] = source.fold(Set.empty[String])(_.keys)
}
