package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.store.rocksdb.FamilyOptions
import io.ttlstore.store.rocksdb.ReadTuning
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * How RocksDB lays out a store's column families, read back from the OPTIONS file RocksDB wrote: index and
 * filter blocks, the L0 triggers, and files of either layout loading under the other.
 */
class RocksDbLayoutSuite extends AnyFunSuite {

  test("index and filters are held beside the block cache by default, and in it when asked") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        val table = tableOptions(p)
        assert(table("cache_index_and_filter_blocks") == "false")
        assert(table("partition_filters") == "false")
      }
    }
    withTempDir { dir =>
      val conf = storeConf(TtlStoreConfig.IndexAndFiltersInCache.key -> "true")
      withProvider(ttlProvider(dir, conf)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        val table = tableOptions(p)
        assert(table("cache_index_and_filter_blocks") == "true")
        assert(table("partition_filters") == "true")
        assert(table("index_type") == "kTwoLevelIndexSearch")
        assert(read(p, 1) == Map(("a", 0) -> 1L))
      }
    }
  }

  test("both families compact at six L0 files, since a snapshot commit leaves two") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        for (family <- Seq(RocksDbHandle.LegacyFamily, RocksDbHandle.TimestampedFamily))
          assert(RocksDbOptionsFile.family(p.localStore.db.dir, family)("level0_file_num_compaction_trigger") == "6")
      }
    }
  }

  test("both families erase the cached blocks of the files compactions replace, where RocksDB can") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        assert(FamilyOptions.uncachesObsoleteFiles, "the development line's RocksDB has uncache_aggressiveness")
        for (family <- Seq(RocksDbHandle.LegacyFamily, RocksDbHandle.TimestampedFamily))
          assert(RocksDbOptionsFile.family(p.localStore.db.dir, family)("uncache_aggressiveness") == "300")
      }
    }
  }

  test("a large store that stops writing merges its L0 files, and compacts at six again once it writes") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        val rows = ReadTuning.MemtableFilterMinRows.toInt
        def family = RocksDbOptionsFile.family(p.localStore.db.dir, RocksDbHandle.TimestampedFamily)
        // minDeltasForSnapshot 3: the snapshot commit of version 3 leaves two L0 files.
        commitVersion(p, 0, (0 until rows).map(i => (s"k$i", 0) -> Some(i.toLong)): _*)
        commitVersion(p, 1, ("a", 0) -> Some(1L))
        commitVersion(p, 2, ("b", 0) -> Some(1L))
        assert(p.localStore.db.l0Files >= 2)
        assert(family("memtable_whole_key_filtering") == "true", "a store of this size filters its memtable")
        assert(family("memtable_prefix_bloom_size_ratio").toDouble > 0)
        assert(family("level0_file_num_compaction_trigger") == "6")

        (3 until 3 + ReadTuning.ReadOnlyCommits).foreach { v =>
          val store = p.getStore(v)
          assert(store.get(key("k7")) != null)
          store.commit()
        }
        assert(family("level0_file_num_compaction_trigger") == "1")
        val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
        while (p.localStore.db.l0Files > 0 && System.nanoTime() < deadline) Thread.sleep(50)
        assert(p.localStore.db.l0Files == 0, "RocksDB merged L0 into the base level")
        assert(read(p, 3 + ReadTuning.ReadOnlyCommits.toLong).size == rows + 2)

        commitVersion(p, 3 + ReadTuning.ReadOnlyCommits.toLong, ("c", 0) -> Some(1L))
        assert(family("level0_file_num_compaction_trigger") == "6")
      }
    }
  }

  test("files written with either index and filter layout load under the other") {
    withTempDir { dir =>
      val inCache = storeConf(TtlStoreConfig.IndexAndFiltersInCache.key -> "true")
      withProvider(ttlProvider(dir, inCache)) { p => commitMany(p, 3, snapshotAt = 3) }
      withProvider(ttlProvider(dir)) { p =>
        assert(read(p, 3) == (0 until 3).map(v => (s"k$v", 0) -> v.toLong).toMap)
        assert(p.localStore.db.dir.listFiles().exists(_.getName.endsWith(".sst")))
        commitVersion(p, 3, ("k3", 0) -> Some(3L))
        p.doMaintenance()
      }
      withProvider(ttlProvider(dir, inCache)) { p =>
        assert(read(p, 4) == (0 until 4).map(v => (s"k$v", 0) -> v.toLong).toMap)
      }
    }
  }
}
