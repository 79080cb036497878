package io.ttlstore

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.config.{ConfigDocs, ConfigScope, MemoryBudget, PythonSettings, StoreScope, TestHooks, TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.testkit.ConfTestHooks
import io.ttlstore.ttl.{TtlPolicy, UpdateType}

class TtlStoreConfigSuite extends AnyFunSuite {
  import TtlStoreConfig._
  import TtlStoreSettings.parse

  test("unset keys take their defaults") {
    assert(parse(Map.empty) == TtlStoreSettings(None, MemoryBudget(bounded = true, 512L << 20, Some(256L << 20))(), 64,
      10, "lz4", 200000, TtlPolicy.Off,
      allowTtlOnStreamStreamJoin = false, sweepRowsPerCommit = 100000))
  }

  test("set keys are parsed, case-insensitively for names of things") {
    val s = parse(Map(MaxMemoryUsageMb.key -> "128", SstCompression.key -> "ZSTD",
        LocalDir.key -> "/tmp/x", "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "3"))
    assert(s.memory == MemoryBudget(bounded = true, 128L << 20, Some(64L << 20))())
    assert(s.sstCompression == "zstd" && s.localDir.contains("/tmp/x"))
  }

  test("memory is bounded by default; unbounded, the block cache has its own size and memtables no limit") {
    assert(parse(Map(WriteBufferCacheRatio.key -> "0.25")).memory.writeBufferBytes.contains(128L << 20))
    assert(parse(Map(BoundedMemoryUsage.key -> "false", BlockCacheSizeMb.key -> "32")).memory ==
      MemoryBudget(bounded = false, 32L << 20, None)())
  }

  test("a size of the other memory mode fails naming it and the setting to use instead") {
    val cache = intercept[TtlStoreException](parse(Map(BlockCacheSizeMb.key -> "128")))
    assert(cache.errorName == "SETTING_OF_OTHER_MEMORY_MODE")
    assert(cache.getMessage.contains(BlockCacheSizeMb.key) && cache.getMessage.contains(MaxMemoryUsageMb.key))
    val total =
      intercept[TtlStoreException](parse(Map(BoundedMemoryUsage.key -> "false", MaxMemoryUsageMb.key -> "128")))
    assert(total.errorName == "SETTING_OF_OTHER_MEMORY_MODE" && total.getMessage.contains(BlockCacheSizeMb.key))
  }

  test("an invalid value fails naming the key, the value and what is allowed") {
    val e = intercept[TtlStoreException](parse(Map(WriteBufferSizeMb.key -> "-3")))
    assert(e.errorName == "INVALID_CONFIG")
    assert(e.getMessage.contains(WriteBufferSizeMb.key) && e.getMessage.contains("-3") &&
      e.getMessage.contains(WriteBufferSizeMb.allowed))
    assert(intercept[TtlStoreException](parse(Map(SstCompression.key -> "gzip"))).errorName ==
      "INVALID_CONFIG")
  }

  test("an unknown key under ttlstore's prefix fails and lists the known keys") {
    val e = intercept[TtlStoreException](parse(Map(Prefix + "blockCacheSizeMb" -> "1")))
    assert(e.errorName == "UNKNOWN_CONFIG" && e.getMessage.contains(BlockCacheSizeMb.key))
  }

  test("test hooks come from the test module, and are no setting: the table, the docs and the unknown-key error") {
    assert(TestHooks.source.exists(_.isInstanceOf[ConfTestHooks]), "the testkit is on ScalaTest's class path")
    val hooked = parse(Map(ConfTestHooks.ClockMs.key -> "42", ConfTestHooks.NativeFilterResource.key -> "/x"))
    assert(hooked.hooks.clockMs.contains(42L) && hooked.hooks.nativeFilterResource.contains("/x"))
    assert(parse(Map.empty).hooks.clockMs.isEmpty && !parse(Map.empty).hooks.rocksDbStatistics)
    assert(ConfTestHooks.all.forall(h => !TtlStoreConfig.all.exists(_.key == h.key)))
    val e = intercept[TtlStoreException](parse(Map(Prefix + "nope" -> "1")))
    assert(!e.getMessage.contains(ConfTestHooks.Prefix), e.getMessage)
    val bad = intercept[TtlStoreException](parse(Map(ConfTestHooks.Leak.key -> "everything")))
    assert(bad.errorName == "INVALID_CONFIG" && bad.getMessage.contains(ConfTestHooks.Leak.key))
  }

  test("a ttlstore setting written without the ttlstore segment fails, naming the key to set instead") {
    val e = intercept[TtlStoreException](parse(Map("spark.sql.streaming.stateStore.ttl" -> "1h")))
    assert(e.errorName == "SETTING_WITHOUT_TTLSTORE_PREFIX" && e.getMessage.contains(Ttl.key))
    val scoped = intercept[TtlStoreException](parse(Map("spark.sql.streaming.stateStore.operator.2.updateType" -> "x")))
    assert(scoped.getMessage.contains(Prefix + "operator.2.updateType"))
    // Spark's own settings, its RocksDB provider's included, pass.
    parse(Map("spark.sql.streaming.stateStore.rocksdb.blockCacheSizeMB" -> "8",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "3"))
  }

  test("docs/configuration.md is exactly what the table generates (run `make docs`)") {
    val docs = new String(Files.readAllBytes(Paths.get("docs/configuration.md")), "UTF-8")
    assert(docs == ConfigDocs.markdownReference)
  }

  test("each setting is a Python option named by its last part in snake case, with its form of value") {
    assert(all.map(PythonSettings.optionName).distinct.size == all.size)
    assert(PythonSettings.optionName(MaxMemoryUsageMb) == "max_memory_usage_mb")
    assert(PythonSettings.optionName(NativeFilterEnabled) == "native_filter")
    assert(PythonSettings.optionName(CompactExpiredShare) == "compact_expired_share")
    val json = PythonSettings.json
    assert(json.contains("""{"option": "bloom_filter_bits_per_key", "key": """" + BloomFilterBitsPerKey.key +
        """", "default": "10", "scoped": false, "form": "whole", "min": 0, "max": 64}"""))
    assert(json.contains(""""option": "native_filter"""") && json.contains(""""names": ["auto", "true", "false"]"""))
  }
}

class TtlScopeSuite extends AnyFunSuite {
  import TtlStoreConfig._
  import TtlStoreSettings.parse

  private val confs = Map(
    Ttl.key -> "1h",
    Prefix + "operator.2.ttl" -> "10 minutes",
    Prefix + "operator.2.store.left-keyToNumValues.ttl" -> "0",
    Prefix + "operator.2.updateType" -> "onreadandwrite")

  test("the most specific of store, operator and global settings wins, option by option") {
    assert(parse(confs, StoreScope(0, "default")).ttl.ttlMs == 3600000L)
    val op = parse(confs, StoreScope(2, "default")).ttl
    assert(op.ttlMs == 600000L && op.updateType == UpdateType.OnReadAndWrite)
    val store = parse(confs, StoreScope(2, "left-keyToNumValues")).ttl
    assert(!store.enabled && store.updateType == UpdateType.OnReadAndWrite)
  }

  test("scoped keys are listed with the operator and store they target") {
    val keys = ConfigScope.scopedKeys(confs).map(k => (k.operatorId, k.storeName, k.setting.name))
    assert(keys.toSet == Set((2L, None, "ttl"), (2L, Some("left-keyToNumValues"), "ttl"), (2L, None, "updateType")))
  }

  test("a bad scoped value fails naming the scoped key and what is allowed") {
    Seq("-1s", "soon").foreach { bad =>
      val e = intercept[TtlStoreException](parse(Map(Prefix + "operator.1.ttl" -> bad), StoreScope(1, "default")))
      assert(e.errorName == "INVALID_CONFIG" && e.getMessage.contains(Prefix + "operator.1.ttl"))
      assert(e.getMessage.contains("10 minutes"))
    }
    val e = intercept[TtlStoreException](parse(Map(StateVisibilityKey.key -> "Sometimes")))
    assert(e.getMessage.contains("NeverReturnExpired, ReturnExpiredIfNotCleanedUp"))
  }

  test("only TTL settings can be scoped; anything else under the prefix is unknown") {
    Seq("operator.1.blockCacheSizeMB", "operator.x.ttl", "operator.1.store.ttl", "operator.1.ttlMs")
      .foreach { k =>
        val e = intercept[TtlStoreException](parse(Map(Prefix + k -> "1")))
        assert(e.errorName == "UNKNOWN_CONFIG", k)
      }
  }
}
