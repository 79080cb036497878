package io.ttlstore.testkit

import java.io.File
import java.util.UUID

import org.rocksdb.{Options, RocksDB}

import io.ttlstore.compat.Parse
import io.ttlstore.config.{ConfigKey, TestHookSource, TestHooks, ValueForm}

/**
 * ttlstore's test module (the testkit jar, never shipped): reads [[TestHooks]] from the settings of a
 * query that Spark schedules, under [[ConfTestHooks.Prefix]]. The product finds it through
 * `java.util.ServiceLoader` when the testkit jar is on the class path beside ttlstore's (tests/hooks.py
 * puts it there), and reads no such setting itself. The keys live outside the settings table
 * ([[io.ttlstore.config.TtlStoreConfig.all]]), so neither `docs/configuration.md` nor Python's options name
 * them and the unknown-key error never offers them.
 */
final class ConfTestHooks extends TestHookSource {
  import ConfTestHooks._

  override def keys: Set[String] = all.map(_.key).toSet

  override def hooks(confs: Map[String, String]): TestHooks =
    TestHooks(ClockMs.readFrom(confs), NativeFilterResource.readFrom(confs), leak(Leak.readFrom(confs)),
      RocksDbStatistics.readFrom(confs), readAhead(ReadAhead.readFrom(confs)))
}

object ConfTestHooks {
  val Prefix: String = ConfigKey.Prefix + "testHook."

  /** The processing time, in epoch milliseconds, every store of the query judges and stamps by. */
  val ClockMs: ConfigKey[Option[Long]] =
    ConfigKey("testHook.clockMs", None, "", ValueForm.Text("epoch milliseconds"), s => Parse.long(s).map(Some(_)))

  /** The jar resource the native filter loads from instead of this platform's. */
  val NativeFilterResource: ConfigKey[Option[String]] =
    ConfigKey("testHook.nativeFilterResource", None, "", ValueForm.Text("a resource path"), s => Some(Some(s)))

  /** `store`: every load of a store opens a RocksDB instance in its working directory and never closes it. */
  val Leak: ConfigKey[Option[String]] =
    ConfigKey("testHook.leak", None, "", ValueForm.Text("store"), s => Some(s).filter(_ == "store").map(Some(_)))

  /** Every store of the JVM counts its reads in RocksDB's statistics (bench/read_profile.py reads them). */
  val RocksDbStatistics: ConfigKey[Boolean] = ConfigKey.flag("testHook.rocksdbStatistics", default = false, "")

  /**
   * What the read-ahead reads instead of each key: `wrong` another key (the key with a byte appended), `none`
   * nothing, `fail` a read that throws.
   */
  val ReadAhead: ConfigKey[Option[String]] = ConfigKey("testHook.readAhead", None, "",
    ValueForm.Text("wrong, none or fail"), s => Some(s).filter(Set("wrong", "none", "fail")).map(Some(_)))

  val all: Seq[ConfigKey[_]] = Seq(ClockMs, NativeFilterResource, Leak, RocksDbStatistics, ReadAhead)

  private def readAhead(fault: Option[String]): Array[Byte] => Array[Byte] = fault match {
    case Some("wrong") => k => k :+ 1.toByte
    case Some("none") => _ => null
    case Some("fail") => _ => throw new java.io.IOException("testHook.readAhead=fail: a read ahead that fails")
    case _ => TestHooks.SameKey
  }

  /** What a load leaks, as an unclosed store leaks native memory, open files and disk (the soak must find it). */
  private def leak(kind: Option[String]): File => Unit = kind match {
    case Some("store") =>
      dir => {
        RocksDB.loadLibrary()
        RocksDB.open(new Options().setCreateIfMissing(true), new File(dir, s"leaked-${UUID.randomUUID()}").getPath)
        ()
      }
    case _ => TestHooks.NothingAfterLoad
  }
}
