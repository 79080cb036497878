package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlHarness._
import io.ttlstore.checkpoint.VersionFile
import io.ttlstore.config.TtlStoreConfig._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.ttl.{ManualClock, StateVisibility, TimeCharacteristic, TtlPolicy, UpdateType}

/** TTL semantics through the provider, with a manual clock and a restart between steps. */
class StateTtlSuite extends AnyFunSuite {

  private val noSweep = SweepRowsPerCommit -> "0"

  /** The tests of the JVM sweep turn the native filter off (NativeFilterStoreSuite tests it). */
  private val jvmSweep = NativeFilterEnabled -> "false"

  test("a missing key is absent, with or without TTL") {
    withHarness(ttl(10)) { h =>
      assert(h.get("nobody").isEmpty && h.peek("nobody").isEmpty)
    }
  }

  test("a row expires exactly when its write time plus the TTL is reached, also after a restart") {
    withHarness(ttl(10)) { h =>
      h.clock.set(100); h.write("a" -> Some(1))
      h.restart()
      h.clock.set(109)
      assert(h.peek("a").contains(1L) && h.get("a").contains(1L))
      h.restart()
      h.clock.set(110)
      assert(h.peek("a").isEmpty && h.get("a").isEmpty)
      h.restart()
      h.clock.set(50) // a clock going back does not revive a row already removed
      assert(h.get("a").isEmpty)
    }
  }

  Seq("OnCreateAndWrite", "OnReadAndWrite").foreach { update =>
    test(s"a write renews the row's life ($update)") {
      withHarness(ttl(10, UpdateTypeKey -> update)) { h =>
        h.write("a" -> Some(1))
        h.clock.set(8); h.write("a" -> Some(2))
        h.restart()
        h.clock.set(17)
        assert(h.peek("a").contains(2L))
        h.restart()
        h.clock.set(18)
        assert(h.get("a").isEmpty)
      }
    }
  }

  test("a read renews the row's life only with OnReadAndWrite") {
    Seq("OnCreateAndWrite" -> false, "OnReadAndWrite" -> true).foreach { case (update, renews) =>
      withHarness(ttl(10, UpdateTypeKey -> update)) { h =>
        h.write("a" -> Some(1))
        h.clock.set(8); assert(h.get("a").contains(1L))
        h.restart()
        h.clock.set(15)
        assert(h.get("a").isDefined == renews, update)
      }
    }
  }

  test("read-only stores never renew a row, even with OnReadAndWrite") {
    withHarness(ttl(10, UpdateTypeKey -> "OnReadAndWrite")) { h =>
      h.write("a" -> Some(1))
      h.clock.set(8); assert(h.peek("a").contains(1L))
      h.clock.set(10)
      assert(h.peek("a").isEmpty)
    }
  }

  test("prefix scans in write stores renew with OnReadAndWrite; full scans do not") {
    withTempDir { dir =>
      val conf = storeConf(Ttl.key -> "10", UpdateTypeKey.key -> "OnReadAndWrite")
      val spec = org.apache.spark.sql.execution.streaming.state.PrefixKeyScanStateEncoderSpec(keySchema, 1)
      val clock = new ManualClock(0)
      withProvider(newProvider(TtlProvider, dir, conf, spec, clock = Some(clock)).asInstanceOf[TtlStateStoreProvider]) {
        p =>
          commitVersion(p, 0, ("a", 1) -> Some(1L), ("b", 1) -> Some(1L))
          clock.set(8)
          val store = p.getStore(1)
          assert(store.prefixScan(prefix("a")).size == 1)
          assert(store.iterator().size == 2)
          store.commit()
          clock.set(12)
          assert(read(p, 2).keySet == Set(("a", 1)))
      }
    }
  }

  test("NeverReturnExpired hides an expired row from every read path and removes it in write stores") {
    withHarness(ttl(10, noSweep)) { h =>
      h.write("a" -> Some(1), "b" -> Some(1), "c" -> Some(1))
      h.clock.set(5); h.write("c" -> Some(2))
      h.restart()
      h.clock.set(10)
      val store = h.current.getStore(h.version)
      assert(store.get(key("a")) == null)
      assert(!store.keyExists(key("b")))
      assert(store.iterator().map(p => keyOf(p.key)._1).toSeq == Seq("c"))
      h.version = store.commit()
      val m = store.metrics
      assert(m.numKeys == 1 && h.storedRows == 1)
      assert(m.customMetrics.find(_._1.name == "ttlstoreExpiredRemovedOnAccess").get._2 == 2)
    }
  }

  test("ReturnExpiredIfNotCleanedUp returns an expired row until the sweep removes it") {
    withHarness(ttl(10, StateVisibilityKey -> "ReturnExpiredIfNotCleanedUp", jvmSweep)) { h =>
      h.write("a" -> Some(1))
      h.restart()
      h.clock.set(20)
      assert(h.peek("a").contains(1L) && h.visible == Map("a" -> 1L))
      val m = h.commitMetrics()
      assert(m("ttlstoreExpiredRemovedBySweep") == 1 && m("numRowsTotal") == 0)
      assert(h.peek("a").isEmpty)
    }
  }

  test("a huge TTL never overflows into expiry") {
    withHarness(ttl(Long.MaxValue)) { h =>
      h.clock.set(Long.MaxValue - 10); h.write("a" -> Some(1))
      h.clock.set(Long.MaxValue - 1)
      assert(h.get("a").contains(1L))
    }
  }

  test("an old version run again is judged at the time its batch first ran, the latest at the current time") {
    withHarness(ttl(10)) { h =>
      h.write("a" -> Some(1))
      h.clock.set(5); h.write("b" -> Some(1))
      h.restart()
      h.clock.set(12)
      // Version 1 is what batch 1 ran on, at time 5 (recorded with version 2): run again, it sees
      // what it saw then, so a replayed batch computes the same (Spark's offset log gives a
      // streaming query's batches the same guarantee).
      val old = h.current.getReadStore(1)
      try assert(contents(old) == Map(("a", 0) -> 1L))
      finally old.release()
      assert(h.visible.keySet == Set("b"))
    }
  }

  test("changing the TTL across a restart applies it to existing rows by their last-write time") {
    withHarness(ttl(100, jvmSweep)) { h =>
      h.write("a" -> Some(1))
      h.clock.set(30); h.write("b" -> Some(1))
      h.clock.set(50)
      h.restart(ttl(40, jvmSweep))
      assert(h.visible.keySet == Set("b"))
      assert(h.commitMetrics()("ttlstoreExpiredRemovedBySweep") == 1)
      h.restart(ttl(1000, jvmSweep))
      assert(h.visible.keySet == Set("b")) // "a" was removed while the TTL was 40
    }
  }

  test("enabling TTL on a checkpoint written without it uses the timestamps rows already carry") {
    withHarness(Map.empty) { h =>
      h.write("a" -> Some(1))
      h.clock.set(100); h.write("b" -> Some(1))
      h.clock.set(150)
      assert(h.commitMetrics()("numRowsTotal") == 2)
      h.restart(ttl(100))
      assert(h.visible.keySet == Set("b"))
    }
  }

  test("disabling TTL makes rows that were not yet removed visible again") {
    withHarness(ttl(10, noSweep)) { h =>
      h.write("a" -> Some(1), "b" -> Some(1))
      h.clock.set(20)
      assert(h.visible.isEmpty)
      assert(h.get("a").isEmpty) // removed on access
      h.restart(Map.empty)
      assert(h.visible == Map("b" -> 1L))
    }
  }

  test("the sweep removes expired rows a bounded number at a time, resuming where it stopped") {
    withHarness(ttl(10, SweepRowsPerCommit -> "4", jvmSweep)) { h =>
      h.write((1 to 10).map(i => f"k$i%02d" -> Some(i.toLong)): _*)
      h.clock.set(10)
      val first = h.commitMetrics()
      assert(first("ttlstoreSweepRowsExamined") == 4 && first("ttlstoreExpiredRemovedBySweep") == 4)
      assert(first("numRowsTotal") == 6 && first("ttlstoreExpiredRowsStored") == 6)
      h.commitMetrics(); h.commitMetrics()
      assert(h.storedRows == 0)
      val idle = h.commitMetrics()
      assert(idle("ttlstoreSweepRowsExamined") == 0, "nothing can be expired: the sweep does not run")
    }
  }

  test("a version that takes a snapshot holds no expired rows") {
    withHarness(ttl(10, noSweep, jvmSweep) + ("spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "2")) { h =>
      h.write("a" -> Some(1), "b" -> Some(1))
      h.clock.set(10)
      val m = h.commitMetrics() // version 2: due for a snapshot
      assert(m("ttlstoreExpiredRemovedBeforeSnapshot") == 2 && h.storedRows == 0)
    }
  }

  test("stores with different scoped TTLs expire independently") {
    withTempDir { dir =>
      val conf = Map(Ttl.key -> "100", Prefix + "operator.1.ttl" -> "10",
        Prefix + "operator.1.store.right.ttl" -> "0")
      val global = new TtlHarness(dir, conf, operatorId = 0)
      val op = new TtlHarness(dir, conf, operatorId = 1)
      val store = new TtlHarness(dir, conf, operatorId = 1, storeName = "right")
      try {
        Seq(global, op, store).foreach(_.write("a" -> Some(1)))
        Seq(global, op, store).foreach(_.clock.set(50))
        assert(global.visible.nonEmpty && op.visible.isEmpty && store.visible.nonEmpty)
      } finally Seq(global, op, store).foreach(_.close())
    }
  }

  Seq("false" -> "the JVM sweep", "true" -> "the native filter").foreach { case (filter, remover) =>
    test(s"numRowsTotal stays bounded under churn: at most the rows of the last TTL plus one batch ($remover)") {
      withHarness(ttl(30, NativeFilterEnabled -> filter)) { h =>
        (0 until 40).foreach { batch =>
          h.clock.set(batch * 10L)
          h.write((0 until 5).map(i => s"b$batch-$i" -> Some(1L)): _*)
          if (batch % 7 == 0) h.restart()
        }
        val m = h.commitMetrics()
        if (filter == "true") h.current.localStore.db.compactNow()
        assert(m("numRowsTotal") <= 4 * 5 && h.storedRows == m("numRowsTotal"))
      }
    }
  }

  test("TTL on a stream-stream join store is refused unless explicitly allowed") {
    withTempDir { dir =>
      val e = intercept[TtlStoreException](new TtlHarness(dir, ttl(10), storeName = "left-keyToNumValues"))
      assert(e.errorName == "TTL_ON_STREAM_STREAM_JOIN" && e.getMessage.contains(Ttl.key))
      assert(e.getMessage.contains(AllowTtlOnStreamStreamJoin.key))
      new TtlHarness(dir, ttl(10, AllowTtlOnStreamStreamJoin -> "true"), storeName = "left-keyToNumValues").close()
      new TtlHarness(dir, Map.empty, storeName = "right-keyWithIndexToValue").close()
    }
  }

  test("the TTL settings are recorded with every version, in changelogs and snapshots") {
    withHarness(ttl(600000, UpdateTypeKey -> "OnReadAndWrite")) { h =>
      h.clock.set(1000); h.write("a" -> Some(1))
      val log = h.current.checkpointFiles.openChangelog(VersionFile(1, None))
      log.readAll()
      val recorded = log.ttl.get
      assert(recorded.policy.contains(TtlPolicy(600000, UpdateType.OnReadAndWrite,
            StateVisibility.NeverReturnExpired, TimeCharacteristic.ProcessingTime, None)))
      assert(recorded.histogram == List(List(1000L, 1L)))
      h.current.localStore.snapshot(1)
      h.current.doMaintenance()
      assert(h.current.checkpointFiles.readManifest(VersionFile(1, None)).ttl.contains(recorded))
    }
  }
}

/** Event-time TTL: rows stamped by a column of their own, "now" the store's stream time. */
class EventTimeTtlSuite extends AnyFunSuite {
  import io.ttlstore.StoreFixtures._
  import io.ttlstore.TtlHarness._
  import io.ttlstore.config.TtlStoreConfig._

  // The fixtures' value row is a single long, `count`: here it doubles as the event time.
  private val eventTime = ttl(10, TimeCharacteristicKey -> "EventTime", EventTimeColumnKey -> "count")

  test("rows are stamped with their event time and expire by the stream time, across restarts") {
    withHarness(eventTime) { h =>
      h.clock.set(1000000) // the wall clock plays no part
      h.write("a" -> Some(100), "b" -> Some(105))
      h.restart()
      assert(h.visible == Map("a" -> 100L, "b" -> 105L)) // stream time 105: nothing expired yet
      h.write("c" -> Some(115))
      h.restart()
      assert(h.visible == Map("c" -> 115L)) // stream time 115: 100 + 10 and 105 + 10 <= 115
      val recorded = h.current.checkpointFiles.openChangelog(VersionFile(h.version, None))
      recorded.readAll()
      assert(recorded.ttl.flatMap(_.streamTimeMs).contains(115L))
    }
  }

  test("late rows older than the stream time minus the TTL are stored expired") {
    withHarness(eventTime) { h =>
      h.write("a" -> Some(200))
      h.write("late" -> Some(50))
      assert(h.visible == Map("a" -> 200L))
    }
  }

  test("switching a checkpoint with rows between processing and event time is refused") {
    withHarness(ttl(10)) { h =>
      h.write("a" -> Some(1))
      h.restart(eventTime)
      val e = intercept[TtlStoreException](h.current.getStore(h.version))
      assert(e.errorName == "TIME_CHARACTERISTIC_CHANGED")
      assert(e.getMessage.contains(TimeCharacteristicKey.key) && e.getMessage.contains("ProcessingTime"))
    }
  }

  test("event time without a column, or with a column that cannot stamp rows, fails at init naming the key") {
    withTempDir { dir =>
      def fails(settings: Map[String, String]) =
        intercept[TtlStoreException](new TtlHarness(dir, settings).close())
      val missing = fails(ttl(10, TimeCharacteristicKey -> "EventTime"))
      assert(missing.errorName == "EVENT_TIME_COLUMN_MISSING" && missing.getMessage.contains(EventTimeColumnKey.key))
      val notTime = fails(ttl(10, TimeCharacteristicKey -> "EventTime", EventTimeColumnKey -> "user"))
      assert(notTime.errorName == "EVENT_TIME_COLUMN_INVALID" && notTime.getMessage.contains("string"))
      val absent = fails(ttl(10, TimeCharacteristicKey -> "EventTime") +
        (Prefix + "operator.0.eventTimeColumn" -> "window.end"))
      assert(absent.errorName == "EVENT_TIME_COLUMN_INVALID")
      assert(absent.getMessage.contains(Prefix + "operator.0.eventTimeColumn") && absent.getMessage.contains("window"))
    }
  }
}
