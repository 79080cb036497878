package io.ttlstore

import java.io.File

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.execution.streaming.state.{PrefixKeyScanStateEncoderSpec, StateStore, StateStoreConf}
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{AdoptionRecord, CheckpointFiles}
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.store.codec.KeyCodec
import io.ttlstore.testkit.ConfTestHooks

/**
 * KIP-258's lazy upgrade, after Kafka's RocksDBTimestampedStoreTest: a store adopts the state Spark's
 * own providers left in the same store directory, serves it as legacy rows, and upgrades them as
 * they are touched (and a bounded number per commit).
 */
class LegacyUpgradeSuite extends AnyFunSuite {
  private val P = TtlStoreConfig.Prefix
  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
  private val T0 = 1763800000000L
  private val Minute = 60000L

  /** Twelve rows over three versions of Spark's provider: users u0..u5, sessions 0 and 1. */
  private val sparkRows: Map[(String, Int), Long] =
    (for (u <- 0 until 6; s <- 0 to 1) yield (s"u$u", s) -> (u * 10L + s)).toMap

  private def writeSparkState(dir: File, provider: String = HdfsProvider, conf: StateStoreConf = storeConf(),
      prefix: Boolean = false): Unit = {
    val spec =
      if (prefix) PrefixKeyScanStateEncoderSpec(keySchema, 1)
      else org.apache.spark.sql.execution
        .streaming.state.NoPrefixKeyStateEncoderSpec(keySchema)
    withProvider(newProvider(provider, dir, conf, spec)) { p =>
      val groups = sparkRows.toSeq.sortBy(_._1).grouped(4).toSeq
      groups.zipWithIndex.foreach { case (rows, v) =>
        commitVersion(p, v,
          rows.map { case (k, c) => k -> Some(c) } :+ (("gone", 0) -> (if (v == 0) Some(1L) else None)): _*)
      }
    }
  }

  private def ours(dir: File, settings: (String, String)*): TtlStateStoreProvider =
    newProvider(TtlProvider, dir, storeConf(settings: _*)).asInstanceOf[TtlStateStoreProvider]

  private def oursWithPrefix(dir: File, settings: (String, String)*): TtlStateStoreProvider =
    newProvider(TtlProvider, dir, storeConf(settings: _*), PrefixKeyScanStateEncoderSpec(keySchema, 1))
      .asInstanceOf[TtlStateStoreProvider]

  private def metric(store: StateStore, name: String): Long =
    store.metrics.customMetrics.collectFirst { case (m, v) if m.name == name => v }.get

  private def familySizes(p: TtlStateStoreProvider): (Int, Int) = {
    def count(it: io.ttlstore.store.rocksdb.CheckedIterator): Int =
      try {
        var n = 0; it.seekToFirst(); while (it.isValid) { n += 1; it.next() }; n
      } finally it.close()
    (count(p.localStore.db.newLegacyIterator()), count(p.localStore.db.newIterator()))
  }

  private def filesOf(dir: File): Map[String, Long] =
    FileUtils.listFiles(dir, null, true).toArray.map(_.asInstanceOf[File])
      .filterNot(_.getPath.contains("/ttlstore/")).map(f => f.getPath -> FileUtils.checksumCRC32(f)).toMap

  test("a new store opens in regular mode") {
    withTempDir { dir =>
      withProvider(ours(dir)) { p =>
        val store = p.getStore(0)
        store.put(key("a"), value(1))
        assert(metric(store, "ttlstoreLegacyRowsRemaining") === 0)
        store.commit()
        assert(familySizes(p) === ((0, 1)))
      }
    }
  }

  test("a store over Spark's HDFS state opens in upgrade mode and serves every row, leaving Spark's files alone") {
    withTempDir { dir =>
      writeSparkState(dir)
      val before = filesOf(dir)
      withProvider(ours(dir)) { p =>
        val store = p.getStore(3)
        assert(contents(store) === sparkRows)
        assert(metric(store, "ttlstoreLegacyRowsRemaining") === 12 && store.metrics.numKeys === 12)
        assert(familySizes(p) === ((12, 0)))
        store.abort()
      }
      assert(filesOf(dir) === before)
    }
  }

  test("get and put upgrade a key, remove takes it out of both families") {
    withTempDir { dir =>
      writeSparkState(dir)
      withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "0")) { p =>
        val store = p.getStore(3)
        assert(countOf(store.get(key("u1", 0))) === 10)
        store.put(key("u2", 1), value(99))
        store.remove(key("u3", 0))
        store.put(key("new"), value(7))
        assert(metric(store, "ttlstoreRowsUpgradedOnAccess") === 1)
        assert(metric(store, "ttlstoreLegacyRowsRemaining") === 9)
        store.commit()
        assert(familySizes(p) === ((9, 3)))
        assert(read(p, 4) === sparkRows - (("u3", 0)) + (("u2", 1) -> 99L) + (("new", 0) -> 7L))
      }
    }
  }

  test("full and prefix iteration merge both families in key order without upgrading") {
    withTempDir { dir =>
      writeSparkState(dir, prefix = true)
      withProvider(oursWithPrefix(dir, P + "upgradeRowsPerCommit" -> "0")) { p =>
        val store = p.getStore(3)
        store.put(key("u2", 1), value(99))
        store.put(key("u2", 5), value(5))
        val all = store.iterator().map(r => keyOf(r.key) -> countOf(r.value)).toSeq
        assert(all.toMap === sparkRows + (("u2", 1) -> 99L) + (("u2", 5) -> 5L))
        val encoded = all.map { case ((u, s), _) => KeyCodec.rowBytes(key(u, s)) }
        val codec = KeyCodec(PrefixKeyScanStateEncoderSpec(keySchema, 1), keySchema)
        val order = all.map { case ((u, s), _) => codec.encode(key(u, s)) }
        assert(order.sliding(2).forall(p => java.util.Arrays.compareUnsigned(p.head, p.last) < 0), "key order")
        assert(encoded.size === 13)
        assert(store.prefixScan(prefix("u2")).map(r => keyOf(r.key) -> countOf(r.value)).toMap ===
          Map(("u2", 0) -> 20L, ("u2", 1) -> 99L, ("u2", 5) -> 5L))
        assert(metric(store, "ttlstoreLegacyRowsRemaining") === 11, "iteration upgrades nothing")
        store.commit()
      }
    }
  }

  test("reopening finds a touched key upgraded and an untouched one still legacy") {
    withTempDir { dir =>
      writeSparkState(dir)
      withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "0")) { p =>
        val store = p.getStore(3)
        store.get(key("u1", 0))
        store.commit()
      }
      assert(new File(dir, s"0/0/${CheckpointFiles.DirName}/${AdoptionRecord.FileName}").isFile)
      withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "0")) { p =>
        val store = p.getStore(4)
        assert(familySizes(p) === ((11, 1)))
        assert(countOf(store.get(key("u1", 0))) === 10 && countOf(store.get(key("u4", 1))) === 41)
        assert(contents(store) === sparkRows)
        store.commit()
      }
      withProvider(ours(dir)) { p => assert(read(p, 5) === sparkRows) }
    }
  }

  test("upgrade mode ends when the bounded upgrade at commit has moved every legacy row") {
    withTempDir { dir =>
      writeSparkState(dir)
      withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "5")) { p =>
        val remaining = (3 until 6).map { v =>
          val store = p.getStore(v)
          store.commit()
          metric(store, "ttlstoreLegacyRowsRemaining")
        }
        assert(remaining === Seq(7, 2, 0))
        assert(familySizes(p) === ((0, 12)))
      }
      withProvider(ours(dir)) { p =>
        val store = p.getStore(6)
        assert(metric(store, "ttlstoreLegacyRowsRemaining") === 0 && contents(store) === sparkRows)
        store.abort()
      }
    }
  }

  for ((provider, conf) <- Seq(
      "Spark's RocksDB provider" -> storeConf(),
      "Spark's RocksDB provider with changelog checkpointing" ->
        storeConf("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled" -> "true"))) {
    test(s"the state of $provider is adopted the same way") {
      withTempDir { dir =>
        writeSparkState(dir, RocksDbProvider, conf)
        withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "0")) { p =>
          val store = p.getStore(3)
          assert(contents(store) === sparkRows && metric(store, "ttlstoreLegacyRowsRemaining") === 12)
          store.put(key("u0", 0), value(5))
          store.commit()
        }
        withProvider(ours(dir)) { p => assert(read(p, 4) === sparkRows + (("u0", 0) -> 5L)) }
      }
    }
  }

  test("retention deletes Spark's files once no retained version needs them, and every retained version still loads") {
    withTempDir { dir =>
      writeSparkState(dir)
      def sparkFiles =
        new File(dir, "0/0").listFiles().map(_.getName).filter(n => n.endsWith(".delta") || n.endsWith(".snapshot"))
      withProvider(ours(dir, P + "upgradeRowsPerCommit" -> "2")) { p =>
        (3 until 6).foreach { v => p.getStore(v).commit(); p.doMaintenance() }
        assert(sparkFiles.nonEmpty, "versions still build on the adopted state")
        (6 until 14).foreach { v => p.getStore(v).commit(); p.doMaintenance() }
      }
      assert(sparkFiles.isEmpty)
      // minBatchesToRetain = 5: versions 10 to 14 are retained.
      withProvider(ours(dir)) { p => (10L to 14L).foreach(v => assert(read(p, v) === sparkRows, s"version $v")) }
    }
  }

  private def visibleAt(dir: File, minutes: Long, policy: String, version: Long): Map[(String, Int), Long] =
    withProvider(ours(dir, P + "ttl" -> "10 minutes", P + "legacyRowTimestamp" -> policy,
        P + "upgradeRowsPerCommit" -> "0", ConfTestHooks.ClockMs.key -> (T0 + minutes * Minute).toString)) { p =>
      val store = p.getStore(version)
      val rows = contents(store)
      store.commit()
      rows
    }

  test("legacyRowTimestamp=migration: legacy rows live for one TTL from the first load after migration") {
    withTempDir { dir =>
      writeSparkState(dir)
      assert(visibleAt(dir, 0, "migration", 3) === sparkRows)
      assert(visibleAt(dir, 9, "migration", 4) === sparkRows)
      assert(visibleAt(dir, 10, "migration", 5) === Map.empty)
    }
  }

  test("legacyRowTimestamp=unknown: legacy rows never expire until rewritten") {
    withTempDir { dir =>
      writeSparkState(dir)
      assert(visibleAt(dir, 0, "unknown", 3) === sparkRows)
      assert(visibleAt(dir, 100L * 24 * 60, "unknown", 4) === sparkRows)
    }
  }

  test("legacyRowTimestamp=expired: legacy rows are expired at once") {
    withTempDir { dir =>
      writeSparkState(dir)
      assert(visibleAt(dir, 0, "expired", 3) === Map.empty)
    }
  }
}
