package io.ttlstore

import java.io.File

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.version.{StoreMetrics, StoreVersion}

/**
 * How the provider answers Spark's lifecycle: its one column family, the driver's zero-argument constructor,
 * settings checked at init, what only transformWithState uses refused, committed and aborted versions, close,
 * loadEmpty and the metrics Spark reads.
 */
class ProviderLifecycleSuite extends AnyFunSuite {

  test("a store names its one column family as Spark does, and refuses any other by name") {
    assert(StoreVersion.DefaultColumnFamily == StateStore.DEFAULT_COL_FAMILY_NAME)
    withTempDir { dir =>
      val provider = ttlProvider(dir)
      try {
        val store = provider.getStore(0)
        assert(store.allColumnFamilyNames == Set(StateStore.DEFAULT_COL_FAMILY_NAME))
        val e = intercept[TtlStoreException](store.get(key("a"), "other"))
        assert(e.errorName == "UNSUPPORTED_OPERATION" && e.getMessage.contains("'other'"))
        store.abort()
      } finally provider.close()
    }
  }

  test("an aborted version leaves nothing behind that would miscount the next one") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitVersion(p, 0, ("kept", 0) -> Some(1L))
        // An aborted put must not make the key count as existing in the next attempt...
        val abortedPut = p.getStore(1)
        abortedPut.put(key("new"), value(1))
        abortedPut.abort()
        val retriedPut = p.getStore(1)
        retriedPut.put(key("new"), value(1))
        retriedPut.commit()
        assert(retriedPut.metrics.numKeys == 2)
        // ...nor an aborted remove make it count as absent.
        val abortedRemove = p.getStore(2)
        abortedRemove.remove(key("kept"))
        abortedRemove.abort()
        val retriedRemove = p.getStore(2)
        retriedRemove.remove(key("kept"))
        retriedRemove.commit()
        assert(retriedRemove.metrics.numKeys == 1)
        assert(read(p, 3) == Map(("new", 0) -> 1L))
      }
    }
  }

  test("close releases the RocksDB instance and deletes the local working copy") {
    withTempDir { dir =>
      val p = ttlProvider(dir)
      commitMany(p, 2)
      val local = p.localStore.directory
      val db = p.localStore.db
      assert(local.exists())
      p.close()
      assert(!local.exists())
      assert(db.isClosed)
      withProvider(ttlProvider(dir)) { fresh => assert(read(fresh, 2).size == 2) }
    }
  }

  test("loadEmpty starts the requested version with no rows") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitMany(p, 2)
        val store = p.getStore(2, None, forceSnapshotOnCommit = false, loadEmpty = true)
        assert(contents(store).isEmpty)
        store.put(key("z"), value(1))
        assert(store.commit() == 3)
        assert(read(p, 3) == Map(("z", 0) -> 1L))
      }
    }
  }

  test("metrics report live rows, real memory and ttlstore's custom figures") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        val store = p.getStore(0)
        (1 to 100).foreach(i => store.put(key(s"k$i"), value(i)))
        store.commit()
        val m = store.metrics
        assert(m.numKeys == 100)
        assert(m.memoryUsedBytes > 0)
        val byName = m.customMetrics.map { case (k, v) => k.name -> v }
        assert(byName("ttlstoreChangelogBytes") > 0)
        assert(StoreMetrics.all.map(_.name).toSet == byName.keySet)
        assert(p.supportedCustomMetrics.map(_.name).toSet == byName.keySet)
      }
    }
  }

  test("the zero-argument constructor has no side effects (Spark's driver calls it for metrics)") {
    val tmp = new File(System.getProperty("java.io.tmpdir"))
    def workDirs: Set[String] = Option(tmp.list()).toSeq.flatten.filter(_.startsWith("ttlstore-")).toSet
    val before = workDirs
    val p = new TtlStateStoreProvider()
    assert(p.supportedCustomMetrics.map(_.name) == StoreMetrics.all.map(_.name))
    assert(p.stateStoreId == null, "nothing is initialized before init")
    p.doMaintenance() // Spark's maintenance may reach a provider that was never initialized
    p.close()
    assert(workDirs == before, "no working directory was created")
  }

  test("an invalid or unknown setting fails init, naming the key") {
    withTempDir { dir =>
      val bad = intercept[TtlStoreException](ttlProvider(dir,
          storeConf(TtlStoreConfig.MaxMemoryUsageMb.key -> "lots")))
      assert(bad.errorName == "INVALID_CONFIG" && bad.getMessage.contains("maxMemoryUsageMB"))
      val typo = intercept[TtlStoreException](ttlProvider(dir,
          storeConf(TtlStoreConfig.Prefix + "blockCache" -> "1")))
      assert(typo.errorName == "UNKNOWN_CONFIG")
    }
  }

  test("what only transformWithState uses is refused with a clear error") {
    withTempDir { dir =>
      val cf = intercept[TtlStoreException] {
        val p = new TtlStateStoreProvider()
        p.init(StateStoreId(dir.getPath, 0, 0), keySchema, valueSchema,
          NoPrefixKeyStateEncoderSpec(keySchema), useColumnFamilies = true, storeConf(),
          new org.apache.hadoop.conf.Configuration(), useMultipleValuesPerKey = false, None)
      }
      assert(cf.errorName == "UNSUPPORTED_OPERATION" && cf.getMessage.contains("transformWithState"))
      val range = intercept[TtlStoreException](newProvider(TtlProvider, dir,
          spec = RangeKeyScanStateEncoderSpec(keySchema, Seq(1))))
      assert(range.errorName == "UNSUPPORTED_OPERATION")
      withProvider(ttlProvider(dir)) { p =>
        val store = p.getStore(0)
        assert(intercept[TtlStoreException](store.merge(key("a"), value(1))).errorName ==
          "UNSUPPORTED_OPERATION")
        assert(intercept[TtlStoreException](store.get(key("a"), "other")).errorName ==
          "UNSUPPORTED_OPERATION")
        store.abort()
      }
    }
  }

  test("a committed or aborted store refuses further changes") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        val store = p.getStore(0)
        store.commit()
        assert(intercept[TtlStoreException](store.put(key("a"), value(1))).errorName ==
          "STORE_NOT_UPDATING")
        val readOnly = p.getReadStore(1)
        assert(intercept[TtlStoreException](readOnly.asInstanceOf[StateStore].put(key("a"), value(1)))
          .errorName == "READ_ONLY_STORE")
        readOnly.release()
      }
    }
  }
}
