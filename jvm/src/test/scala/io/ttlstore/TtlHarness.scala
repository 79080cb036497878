package io.ttlstore

import java.io.File

import org.apache.spark.sql.execution.streaming.state.{NoPrefixKeyStateEncoderSpec, StateStoreId}

import io.ttlstore.StoreFixtures._
import io.ttlstore.config.{ConfigKey, TtlStoreConfig}
import io.ttlstore.ttl.ManualClock

/**
 * One store driven step by step with a manual clock, closed and reopened from its checkpoint
 * whenever a test says `restart` (the reload between steps of Flink's TtlStateTestBase).
 */
final class TtlHarness(
    dir: File,
    private var settings: Map[String, String],
    operatorId: Long = 0L,
    storeName: String = StateStoreId.DEFAULT_STORE_NAME) extends AutoCloseable {

  val clock = new ManualClock(0L)
  private var provider: TtlStateStoreProvider = open()
  var version = 0L

  private def open(): TtlStateStoreProvider = {
    val p = newProvider(TtlProvider, dir,
      storeConf(("spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "1000") +: settings.toSeq: _*),
      NoPrefixKeyStateEncoderSpec(keySchema), storeName = storeName, operatorId = operatorId, clock = Some(clock))
      .asInstanceOf[TtlStateStoreProvider]
    p
  }

  def current: TtlStateStoreProvider = provider

  /** Closes the provider and opens a new one on the same checkpoint, optionally with new settings. */
  def restart(newSettings: Map[String, String] = settings): Unit = {
    provider.close()
    settings = newSettings
    provider = open()
  }

  /** Commits one version: puts (Some) and removes (None). */
  def write(changes: (String, Option[Long])*): Unit =
    version = commitVersion(provider, version, changes.map { case (k, v) => (k, 0) -> v }: _*)

  /** Point reads through a write store, committed (so that OnReadAndWrite renewals persist). */
  def readCommitted(users: String*): Map[String, Option[Long]] = {
    val store = provider.getStore(version)
    val got = users.map(u => u -> Option(store.get(key(u))).map(countOf)).toMap
    version = store.commit()
    got
  }

  def get(user: String): Option[Long] = readCommitted(user)(user)

  /** A point read through a read-only store: it never writes. */
  def peek(user: String): Option[Long] = {
    val store = provider.getReadStore(version)
    try Option(store.get(key(user))).map(countOf)
    finally store.release()
  }

  /** Every visible row, read through a read-only store. */
  def visible: Map[String, Long] = read(provider, version).map { case ((u, _), c) => u -> c }

  /** Rows physically stored in the local DB, expired or not. */
  def storedRows: Int = {
    val it = provider.localStore.db.newIterator()
    try { it.seekToFirst(); var n = 0; while (it.isValid) { n += 1; it.next() }; n }
    finally it.close()
  }

  /** The metrics of a commit that only reads `reads` (none: an empty commit, which also runs the sweep). */
  def commitMetrics(reads: String*): Map[String, Long] = commitMetricsAfter(())(reads: _*)

  /** [[commitMetrics]], with `between` run after the commit and before the metrics are read (as maintenance may). */
  def commitMetricsAfter(between: => Unit)(reads: String*): Map[String, Long] = {
    val store = provider.getStore(version)
    reads.foreach(u => store.get(key(u)))
    version = store.commit()
    between
    val m = store.metrics
    m.customMetrics.map { case (k, v) => k.name -> v } + ("numRowsTotal" -> m.numKeys)
  }

  override def close(): Unit = provider.close()
}

object TtlHarness {
  def ttl(ms: Long, more: (ConfigKey[_], String)*): Map[String, String] =
    (Seq(TtlStoreConfig.Ttl.key -> ms.toString) ++ more.map { case (k, v) => k.key -> v }).toMap

  def withHarness[T](settings: Map[String, String])(body: TtlHarness => T): T =
    withTempDir { dir =>
      val h = new TtlHarness(dir, settings)
      try body(h)
      finally h.close()
    }
}
