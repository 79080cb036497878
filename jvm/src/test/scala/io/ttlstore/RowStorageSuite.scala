package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{Changelog, VersionFile}
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.store.codec.{KeyCodec, TimestampedValue}
import io.ttlstore.ttl.ManualClock

/**
 * How a row is stored: its last-write time beside its value, and exact counts from what reads learned of keys.
 */
class RowStorageSuite extends AnyFunSuite {

  test("each row is stored with its last-write time from the injected clock") {
    withTempDir { dir =>
      val clock = new ManualClock(1000L)
      withProvider(ttlProvider(dir, clock = Some(clock))) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L), ("b", 0) -> Some(1L))
        clock.set(5000L)
        commitVersion(p, 1, ("a", 0) -> Some(2L))
        val db = p.localStore.db
        assert(TimestampedValue.timestamp(db.get(KeyCodec.rowBytes(key("a")))) == 5000L)
        assert(TimestampedValue.timestamp(db.get(KeyCodec.rowBytes(key("b")))) == 1000L)
        val log = p.checkpointFiles.openChangelog(VersionFile(2, None))
        val records = log.readAll()
        assert(records.size == 1)
        assert(TimestampedValue.timestamp(records.head.asInstanceOf[Changelog.Put].value) == 5000L)
      }
    }
  }

  Seq(0, 3, 100000).foreach { capacity =>
    test(s"row counts stay exact when writes rely on earlier reads (knownKeysCapacity=$capacity)") {
      withTempDir { dir =>
        val conf = storeConf(TtlStoreConfig.KnownKeysCapacity.key -> capacity.toString)
        withProvider(ttlProvider(dir, conf)) { p =>
          commitVersion(p, 0, ("a", 0) -> Some(1L), ("b", 0) -> Some(1L))
          val readStore = p.getReadStore(1)
          assert(readStore.get(key("a")) != null)
          assert(readStore.get(key("c")) == null)
          assert(!readStore.keyExists(key("d")))
          val store = p.upgradeReadStoreToWriteStore(readStore, 1)
          store.put(key("a"), value(2)) // existed: no new row
          store.put(key("c"), value(1)) // was absent: one new row
          store.remove(key("d")) // absent: nothing to remove
          store.remove(key("b")) // existed, never read: one row less
          store.put(key("c"), value(3)) // now exists
          store.remove(key("c"))
          store.put(key("e"), value(1))
          store.commit()
          assert(store.metrics.numKeys == 2)
          assert(read(p, 2) == Map(("a", 0) -> 2L, ("e", 0) -> 1L))
        }
      }
    }
  }

  test("keyExists remembers only the keys it did not find, and writes of found keys still count exactly") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L), ("b", 0) -> Some(1L))
        val store = p.getStore(1)
        assert(store.keyExists(key("a")) && store.keyExists(key("b")) && !store.keyExists(key("c")))
        assert(p.localStore.knownKeys.size == 1) // c only: deduplication never writes a key it found
        store.put(key("a"), value(2)) // found, not remembered: looked up again, no new row
        store.remove(key("b")) // found, not remembered: one row less
        store.put(key("c"), value(1)) // remembered as absent: one new row
        store.commit()
        assert(store.metrics.numKeys == 2)
        assert(read(p, 2) == Map(("a", 0) -> 2L, ("c", 0) -> 1L))
      }
    }
  }
}
