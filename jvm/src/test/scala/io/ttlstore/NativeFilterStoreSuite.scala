package io.ttlstore

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, Logger => CoreLogger}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlHarness._
import io.ttlstore.checkpoint.VersionFile
import io.ttlstore.config.TtlStoreConfig._
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.nativelib.NativeFilter
import io.ttlstore.testkit.ConfTestHooks

/** The native filter behind the provider: what it removes, how rows are counted, how it is chosen. */
class NativeFilterStoreSuite extends AnyFunSuite {
  private val filterOn = NativeFilterEnabled -> "true"
  private val missingLibrary = ConfTestHooks.NativeFilterResource -> "/io/ttlstore/native/nowhere/libttlstore_filter.so"

  test("with the filter on or off, every read returns the same rows, restarts and compactions included") {
    withTempDir { onDir =>
      withTempDir { offDir =>
        val settings = (mode: String) => ttl(20, NativeFilterEnabled -> mode, SweepRowsPerCommit -> "3")
        val on = new TtlHarness(onDir, settings("true"))
        val off = new TtlHarness(offDir, settings("false"))
        val r = new Random(7)
        try {
          (1 to 60).foreach { step =>
            val changes = (1 to 1 + r.nextInt(5)).map { _ =>
              val k = s"k${r.nextInt(12)}"
              k -> (if (r.nextInt(4) == 0) None else Some(r.nextInt(100).toLong))
            }
            Seq(on, off).foreach { h =>
              h.clock.set(step * 3L)
              h.write(changes: _*)
            }
            if (r.nextInt(3) == 0) on.current.localStore.db.compactNow()
            if (r.nextInt(8) == 0) Seq(on, off).foreach(_.restart())
            val probe = (0 until 12).map(i => s"k$i")
            assert(on.visible == off.visible, s"full scan at step $step")
            assert(probe.map(on.peek) == probe.map(off.peek), s"point reads at step $step")
          }
          on.current.localStore.db.compactNow()
          assert(on.storedRows == on.visible.size, "after a compaction only live rows are stored")
        } finally Seq(on, off).foreach(_.close())
      }
    }
  }

  test("expired rows leave the disk at compaction: the filter counts them and no delete is logged") {
    withHarness(ttl(10, filterOn)) { h =>
      h.write((0 until 500).map(i => s"k$i" -> Some(i.toLong)): _*)
      h.clock.set(10)
      val expiring = h.commitMetrics()
      assert(expiring("numRowsTotal") == 0, "every row expired: none is counted")
      assert(expiring("ttlstoreExpiredRemovedBySweep") == 0 && expiring("ttlstoreSweepRowsExamined") == 0)
      assert(h.storedRows == 500, "nothing is deleted by the store itself")
      h.current.localStore.db.compactNow()
      assert(h.storedRows == 0)
      assert(h.commitMetrics()("ttlstoreExpiredRemovedByFilter") == 500)
      val changelog = h.current.checkpointFiles.openChangelog(VersionFile(h.version - 1, None))
      try assert(changelog.next().isEmpty, "the commit that saw them expire logged no delete")
      finally changelog.close()
    }
  }

  test("a key whose expired row the filter dropped is counted once when written again") {
    withHarness(ttl(10, filterOn)) { h =>
      h.write("a" -> Some(1), "b" -> Some(1))
      h.clock.set(5); h.write("c" -> Some(1))
      h.clock.set(11)
      assert(h.commitMetrics()("numRowsTotal") == 1)
      h.current.localStore.db.compactNow()
      assert(h.storedRows == 1, "the filter dropped a and b")
      h.write("a" -> Some(2)) // written anew
      h.restart()
      val m = h.commitMetrics()
      assert(m("numRowsTotal") == 2 && h.visible == Map("a" -> 2L, "c" -> 1L))
      assert(h.current.localStore.timestamps.total == 2)
    }
  }

  test("a row the commit uncounted and a read then met leaves numRowsTotal once: ttlstoreRowsExpired adds up") {
    withHarness(ttl(10, filterOn)) { h =>
      h.write("a" -> Some(1), "b" -> Some(1), "c" -> Some(1))
      h.clock.set(11)
      val uncounting = h.commitMetrics()
      assert(uncounting("numRowsTotal") == 0 && uncounting("ttlstoreRowsExpired") == 3)
      assert(h.storedRows == 3, "no compaction yet: the rows are still on disk")
      val reading = h.commitMetrics("a", "b")
      assert(h.storedRows == 1, "the read removed the expired rows it met")
      assert(reading("numRowsTotal") == 0 && reading("ttlstoreRowsExpired") == 0, reading)
      assert(reading("ttlstoreExpiredRemovedOnAccess") == 2, "removed on access, having left numRowsTotal before")
    }
  }

  test("a TTL changed across a restart counts the stored rows again") {
    withHarness(ttl(40, filterOn)) { h =>
      h.write("a" -> Some(1))
      h.clock.set(30); h.write("b" -> Some(1))
      h.clock.set(50)
      assert(h.commitMetrics()("numRowsTotal") == 1, "a expired at 40 and is no longer counted")
      h.restart(ttl(1000, filterOn))
      // "a" was not compacted away yet: under the longer TTL it is alive again, and counted.
      assert(h.visible.keySet == Set("a", "b") && h.commitMetrics()("numRowsTotal") == 2)
    }
  }

  test("maintenance compacts a store once enough of its rows expired, and the disk is given back") {
    withHarness(ttl(10, filterOn, CompactExpiredShare -> "0.5")) { h =>
      h.write((0 until 3000).map(i => s"k$i" -> Some(i.toLong)): _*)
      h.restart()
      h.clock.set(5)
      h.write((0 until 1000).map(i => s"n$i" -> Some(i.toLong)): _*)
      h.clock.set(10)
      val m = h.commitMetrics()
      assert(m("ttlstoreCompactionsRequested") == 1, "3000 of 4000 rows expired")
      assert(h.storedRows == 4000, "the commit itself compacts nothing")
      h.current.doMaintenance()
      assert(h.storedRows == 1000, "the compaction leaves only the live rows")
      assert(h.commitMetrics()("ttlstoreCompactionsRequested") == 0, "the count starts again")
      h.current.doMaintenance()
    }
  }

  test("the expired rows a commit leaves stored are reported as of the commit, compacted away before the read or not") {
    withHarness(ttl(10, filterOn, CompactExpiredShare -> "0.5")) { h =>
      h.write((0 until 3000).map(i => s"k$i" -> Some(i.toLong)): _*)
      h.restart()
      h.clock.set(10)
      val m = h.commitMetricsAfter(h.current.doMaintenance())()
      assert(h.storedRows == 0, "maintenance compacted the expired rows away before the metrics were read")
      assert(m("ttlstoreExpiredRowsStored") == 3000, m)
      assert(h.commitMetrics()("ttlstoreExpiredRowsStored") == 0, "the next commit finds them gone")
    }
  }

  test("a reopened store gets a new filter that judges with the new version's time") {
    withHarness(ttl(10, filterOn)) { h =>
      h.write((0 until 100).map(i => s"k$i" -> Some(i.toLong)): _*)
      h.restart()
      h.clock.set(9)
      h.write("late" -> Some(1))
      h.current.localStore.db.compactNow()
      assert(h.storedRows == 101, "nothing is expired at 9")
      h.restart()
      h.clock.set(10)
      h.write("later" -> Some(1))
      h.current.localStore.db.compactNow()
      assert(h.storedRows == 2 && h.visible.keySet == Set("late", "later"))
    }
  }

  test("TTL off or nativeFilter.enabled=false: the store opens without a filter") {
    withHarness(Map(NativeFilterEnabled.key -> "true")) { h =>
      h.write("a" -> Some(1))
      assert(!h.current.localStore.usesFilter, "no TTL, no filter (true only matters with TTL)")
    }
    withHarness(ttl(10, NativeFilterEnabled -> "false")) { h =>
      h.write("a" -> Some(1))
      assert(!h.current.localStore.usesFilter)
    }
    withHarness(ttl(10)) { h =>
      h.write("a" -> Some(1))
      assert(h.current.localStore.usesFilter, "auto uses the library this build packs")
    }
  }

  test("auto without the library falls back to the JVM sweep with one warning per JVM") {
    val warnings = captureWarnings {
      withHarness(ttl(10, missingLibrary)) { h =>
        assert(!h.current.localStore.usesFilter)
        h.write("a" -> Some(1))
        h.clock.set(10)
        assert(h.commitMetrics()("ttlstoreExpiredRemovedBySweep") == 1)
        h.restart()
      }
    }
    assert(warnings.count(_.contains("native TTL compaction filter is not available")) == 1, warnings)
    assert(warnings.exists(_.contains("nowhere/libttlstore_filter.so")))
  }

  test("true without the library fails the store, naming the setting and what was tried") {
    withTempDir { dir =>
      val e = intercept[TtlStoreException](new TtlHarness(dir, ttl(10, filterOn, missingLibrary)))
      assert(e.errorName == "NATIVE_FILTER_UNAVAILABLE")
      assert(e.getMessage.contains(NativeFilterEnabled.key) && e.getMessage.contains("nowhere"))
    }
  }

  test("periodic compaction defaults to twice the TTL, within one hour and 30 days") {
    def seconds(conf: Map[String, String]) = TtlStoreSettings.parse(conf).periodicCompactionSeconds
    assert(seconds(ttl(10000)) == 3600)
    assert(seconds(ttl(7200000)) == 14400)
    assert(seconds(ttl(365L * 24 * 3600 * 1000)) == 30L * 24 * 3600)
    assert(seconds(ttl(10000, PeriodicCompaction -> "5 minutes")) == 300)
    assert(seconds(ttl(10000, PeriodicCompaction -> "0")) == 0)
  }

  /** The WARN messages NativeFilter logs while `body` runs. */
  test("RocksDB gets periodic compaction on the filtered family only, as written in its OPTIONS file") {
    withHarness(ttl(2 * 3600 * 1000L, filterOn)) { h =>
      h.write("a" -> Some(1))
      val db = new java.io.File(h.current.localStore.directory, "db")
      def family(name: String) = RocksDbOptionsFile.family(db, name)
      def filtered(name: String) = family(name).values.exists(_.contains("io.ttlstore.TtlCompactionFilter"))
      assert(family("timestamped")("periodic_compaction_seconds") == "14400")
      assert(filtered("timestamped"))
      assert(!filtered("default"))
    }
  }

  private def captureWarnings(body: => Unit): Seq[String] = {
    val messages = new ConcurrentLinkedQueue[String]()
    val name = NativeFilter.getClass.getName.stripSuffix("$")
    val logger = LogManager.getLogger(name).asInstanceOf[CoreLogger]
    val appender = new AbstractAppender("ttlstore-capture", null, null, true, Property.EMPTY_ARRAY) {
      override def append(event: LogEvent): Unit = messages.add(event.getMessage.getFormattedMessage)
    }
    appender.start()
    val level = logger.getLevel
    Configurator.setLevel(name, Level.WARN)
    logger.addAppender(appender)
    try body
    finally {
      logger.removeAppender(appender)
      Configurator.setLevel(name, level)
      appender.stop()
    }
    messages.asScala.toSeq
  }
}
