package io.ttlstore

import java.io.{File, RandomAccessFile}

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{Changelog, CheckpointFiles, VersionFile}
import io.ttlstore.config.SparkStateSettings.{AutoSnapshotRepairEnabled, AutoSnapshotRepairMaxReplay, MaxVersionsToDeletePerMaintenance}
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.ttl.ManualClock
import io.ttlstore.store.codec.{KeyCodec, TimestampedValue}
import io.ttlstore.store.rocksdb.ReadTuning
import io.ttlstore.store.rocksdb.RocksDbHandle
import io.ttlstore.store.version.{StoreMetrics, StoreVersion}

/** What only ttlstore promises: its layout on disk, its timestamps, and its errors on bad input. */
class TtlStateStoreProviderSuite extends AnyFunSuite {

  private def ttlProvider(
      dir: File, conf: StateStoreConf = storeConf(), clock: Option[ManualClock] = None): TtlStateStoreProvider =
    newProvider(TtlProvider, dir, conf, clock = clock).asInstanceOf[TtlStateStoreProvider]

  /** A store's directory is `<checkpoint root>/<operator>/<partition>`. */
  private def storeDir(dir: File): File = new File(dir, "0/0")
  private def ttlDir(dir: File): File = new File(storeDir(dir), CheckpointFiles.DirName)

  private def filesBelow(dir: File): Seq[String] = {
    val base = dir.toPath
    java.nio.file.Files.walk(base).toArray.map(_.asInstanceOf[java.nio.file.Path])
      .filter(p => p.toFile.isFile).map(p => base.relativize(p).toString).toSeq.sorted
  }

  /** Commits versions 1..n, each adding one key, with maintenance after version `snapshotAt`. */
  private def commitMany(p: StateStoreProvider, n: Int, snapshotAt: Int = -1): Unit =
    (0 until n).foreach { v =>
      commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong))
      if (v + 1 == snapshotAt) p.doMaintenance()
    }

  private def loadError(dir: File, version: Long, settings: (String, String)*): TtlStoreException =
    withProvider(ttlProvider(dir, storeConf(settings: _*))) { fresh =>
      intercept[TtlStoreException](fresh.getStore(version))
    }

  private def flipByte(file: File, at: Long): Unit = {
    val f = new RandomAccessFile(file, "rw")
    try { f.seek(at); val b = f.read(); f.seek(at); f.write(b ^ 0xff) }
    finally f.close()
  }

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

  /** The block-based table options of the timestamped family, as RocksDB wrote them in its OPTIONS file. */
  private def tableOptions(p: TtlStateStoreProvider): Map[String, String] =
    RocksDbOptionsFile.section(p.localStore.db.dir,
      s"""TableOptions/BlockBasedTable "${RocksDbHandle.TimestampedFamily}"""")

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

  test("all of ttlstore's files live below ttlstore/ in the store's directory") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 7, snapshotAt = 4) }
      val files = filesBelow(storeDir(dir))
      assert(files.exists(_.endsWith(".snapshot")) && files.exists(_.endsWith(".sst")))
      assert(files.forall(f => f.startsWith("ttlstore/") || f.startsWith(".")), files)
    }
  }

  test("a later snapshot uploads only the SST files that changed") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        commitMany(p, 3, snapshotAt = 3)
        val first = p.checkpointFiles.readManifest(VersionFile(3, None))
        (3 until 6).foreach(v => commitVersion(p, v, (s"x$v", 0) -> Some(1L)))
        p.doMaintenance()
        val second = p.checkpointFiles.readManifest(VersionFile(6, None))
        assert(first.sstFiles.nonEmpty)
        assert(first.sstFiles.map(_.dfsName).toSet.subsetOf(second.sstFiles.map(_.dfsName).toSet))
        assert(second.sstFiles.size > first.sstFiles.size)
        assert(second.numRows == 6)
      }
    }
  }

  test("maintenance deletes the files that no retained version needs") {
    withTempDir { dir =>
      val conf = storeConf("spark.sql.streaming.minBatchesToRetain" -> "2",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "2")
      withProvider(ttlProvider(dir, conf)) { p =>
        (0 until 12).foreach { v =>
          commitVersion(p, v, (s"k$v", 0) -> Some(1L), (s"k${v - 1}", 0) -> None)
          p.doMaintenance()
        }
        val listing = p.checkpointFiles.listing()
        assert(listing.changelogs.head >= 9, listing)
        assert(listing.snapshots.head >= 9, listing)
        val referenced = listing.snapshots.toSeq.flatMap(v =>
          p.checkpointFiles.readManifest(VersionFile(v, None)).sstFiles.map(_.dfsName)).toSet
        val onDisk = p.checkpointFiles.sstFiles().map(_.getPath.getName).toSet
        assert(onDisk == referenced)
      }
    }
  }

  test("maintenance deletes the temporary files killed writers left, once older than every retained version") {
    withTempDir { dir =>
      val conf = storeConf("spark.sql.streaming.minBatchesToRetain" -> "2",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "2")
      val root = ttlDir(dir)
      val leftovers = Seq(".2.changelog.0a1b.TID7.tmp", "..2.changelog.0a1b.TID7.tmp.crc", ".4.snapshot.9f8e.tmp",
        ".11.changelog.77aa.tmp")
      withProvider(ttlProvider(dir, conf)) { p =>
        commitVersion(p, 0, ("k0", 0) -> Some(1L))
        leftovers.foreach(n => assert(new File(root, n).createNewFile(), n))
        val oldSstTemp = new File(new File(root, "sst"), ".000009.sst.5c5c.tmp")
        assert(oldSstTemp.getParentFile.exists() || oldSstTemp.getParentFile.mkdirs())
        assert(oldSstTemp.createNewFile() && oldSstTemp.setLastModified(System.currentTimeMillis() - 3600000L))
        (1 until 12).foreach { v =>
          commitVersion(p, v, (s"k$v", 0) -> Some(1L))
          p.doMaintenance()
        }
        val left = root.list().toSet
        assert(!left.exists(_.startsWith(".2.")) && !left.exists(_.startsWith("..2.")) && !left.contains(
            ".4.snapshot.9f8e.tmp"),
          left)
        assert(left.contains(".11.changelog.77aa.tmp"), "a temporary file of a retained version may still be written")
        assert(!oldSstTemp.exists())
      }
    }
  }

  test("maintenance running beside the task never loses or changes a committed version") {
    withTempDir { dir =>
      val conf = storeConf("spark.sql.streaming.minBatchesToRetain" -> "4",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "2")
      val expected = withProvider(ttlProvider(dir, conf)) { p =>
        @volatile var running = true
        val maintenance = new Thread(() => while (running) p.doMaintenance())
        maintenance.start()
        val rows =
          try (0 until 40).map { v =>
              commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong), (s"k${v - 3}", 0) -> None)
              (v + 1L) -> read(p, v + 1L)
            }
          finally { running = false; maintenance.join() }
        p.doMaintenance()
        rows.toMap
      }
      assert(new File(ttlDir(dir), "sst").listFiles().nonEmpty)
      withProvider(ttlProvider(dir, conf)) { fresh =>
        (37L to 40L).foreach(v => assert(read(fresh, v) == expected(v), s"v$v"))
      }
    }
  }

  test("a corrupted changelog fails the load, naming the file and version") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3) }
      val file = new File(ttlDir(dir), "2.changelog")
      flipByte(file, file.length() / 2)
      val e = loadError(dir, 3)
      assert(e.errorName == "CHANGELOG_CORRUPTED", e.getMessage)
      assert(e.getMessage.contains("2.changelog") && e.getMessage.contains("version 2"))
    }
  }

  test("a truncated changelog fails the load, naming the file and version") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3) }
      val file = new File(ttlDir(dir), "3.changelog")
      val f = new RandomAccessFile(file, "rw")
      // Cut into the records: the last 21 bytes are lz4's own empty end block, which holds no data.
      try f.setLength(file.length() - 30)
      finally f.close()
      val e = loadError(dir, 3)
      assert(Set("CHANGELOG_TRUNCATED", "CHANGELOG_CORRUPTED")(e.errorName), e.getMessage)
      assert(e.getMessage.contains("3.changelog"))
    }
  }

  test("a missing changelog fails the load, naming the file") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3) }
      assert(new File(ttlDir(dir), "2.changelog").delete())
      val e = loadError(dir, 3)
      assert(e.errorName == "CHANGELOG_MISSING" && e.getMessage.contains("2.changelog"))
    }
  }

  test("a deleted latest changelog fails the load, naming the file and the latest version left") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3) }
      assert(new File(ttlDir(dir), "3.changelog").delete())
      val e = loadError(dir, 3)
      assert(e.errorName == "STATE_VERSION_NOT_FOUND", e.getMessage)
      assert(e.getMessage.contains("3.changelog") && e.getMessage.contains("latest committed version: 2"))
    }
  }

  test("a version beyond the checkpoint fails with the latest version named") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 2) }
      val e = loadError(dir, 9)
      assert(e.errorName == "STATE_VERSION_NOT_FOUND" && e.getMessage.contains("latest committed version: 2"))
    }
  }

  private val noRepair = AutoSnapshotRepairEnabled -> "false"

  test("with autoSnapshotRepair off, a missing or damaged SST file fails the load, naming the file and the snapshot") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3, snapshotAt = 3) }
      val sst = new File(ttlDir(dir), "sst").listFiles().filter(_.getName.endsWith(".sst")).head
      flipByte(sst, sst.length() / 2)
      val damaged = loadError(dir, 3, noRepair)
      assert(damaged.errorName == "SST_CORRUPTED" && damaged.getMessage.contains(sst.getName))
      assert(damaged.getMessage.contains("version 3"))
      assert(sst.delete())
      val missing = loadError(dir, 3, noRepair)
      assert(missing.errorName == "SST_MISSING" && missing.getMessage.contains(sst.getName))
    }
  }

  private def truncate(file: File): Unit = {
    val f = new RandomAccessFile(file, "rw")
    try f.setLength(10)
    finally f.close()
  }

  test("with autoSnapshotRepair off, a damaged snapshot file fails the load, naming it") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3, snapshotAt = 3) }
      truncate(new File(ttlDir(dir), "3.snapshot"))
      val e = loadError(dir, 3, noRepair)
      assert(e.errorName == "SNAPSHOT_CORRUPTED" && e.getMessage.contains("3.snapshot"))
    }
  }

  test("a damaged snapshot is repaired around as Spark's autoSnapshotRepair does: an older base plus changelogs") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 6, snapshotAt = 3); p.doMaintenance() }
      assert(Seq("3.snapshot", "6.snapshot").forall(new File(ttlDir(dir), _).exists()))
      truncate(new File(ttlDir(dir), "6.snapshot"))
      withProvider(ttlProvider(dir)) { p =>
        val store = p.getStore(6)
        assert(contents(store) == (0 until 6).map(v => (s"k$v", 0) -> v.toLong).toMap)
        assert(store.metrics.customMetrics(StoreMetrics.SnapshotsRepaired) == 1L)
        assert(store.metrics.customMetrics(StoreMetrics.ChangelogsReplayed) == 3L, "from the snapshot of version 3")
      }
    }
  }

  test("a repair that would replay more than maxChangeFileReplay changelogs fails by name, saying so") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3, snapshotAt = 3) }
      truncate(new File(ttlDir(dir), "3.snapshot"))
      val e = loadError(dir, 3, AutoSnapshotRepairMaxReplay -> "2")
      assert(e.errorName == "SNAPSHOT_REPAIR_FAILED")
      assert(e.getMessage.contains("maxChangeFileReplay") && e.getMessage.contains("3.snapshot"))
      assert(withProvider(ttlProvider(dir))(p => contents(p.getStore(3))).size == 3, "the default bound repairs it")
    }
  }

  test("maxVersionsToDeletePerMaintenance bounds one cleanup's deletions to the oldest versions") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir, storeConf("spark.sql.streaming.minBatchesToRetain" -> "100"))) { p =>
        (0 until 12).foreach { v => commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong)); p.doMaintenance() }
      }
      def versions(suffix: String): Seq[Long] =
        ttlDir(dir).list().filter(_.endsWith(suffix)).map(_.takeWhile(_ != '.').toLong).sorted.toSeq
      assert(versions(".snapshot").take(2) == Seq(3L, 6L) && versions(".changelog").head == 1L)
      withProvider(ttlProvider(dir, storeConf(MaxVersionsToDeletePerMaintenance -> "2"))) { p =>
        p.doMaintenance()
        assert(versions(".changelog").head == 3L && versions(".snapshot").head == 3L)
        p.doMaintenance()
        assert(versions(".changelog").head == 5L && versions(".snapshot").head == 6L)
        p.doMaintenance()
        assert(versions(".changelog").head == 6L)
        assert(contents(p.getStore(12)).size == 12)
      }
    }
  }

  test("the committed state is never changed by a failed load") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p => commitMany(p, 3) }
      val file = new File(ttlDir(dir), "3.changelog")
      val original = java.nio.file.Files.readAllBytes(file.toPath)
      flipByte(file, file.length() / 2)
      loadError(dir, 3)
      java.nio.file.Files.write(file.toPath, original)
      withProvider(ttlProvider(dir)) { fresh => assert(read(fresh, 3).size == 3) }
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

  test("a store going back to an older version takes the SST files it already holds, and fetches none of them") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        // minDeltasForSnapshot 3: snapshots of versions 3 and 6, each uploaded by the maintenance after it.
        (0 until 6).foreach { v =>
          commitVersion(p, v, (0 until 500).map(i => (s"k$v-$i", 0) -> Some(i.toLong)): _*)
          if (v == 2 || v == 5) p.doMaintenance()
        }
        val older = p.getStore(4)
        val byName = older.metrics.customMetrics.map { case (k, v) => k.name -> v }
        older.abort()
        assert(byName("ttlstoreLoadFilesReused") >= 1, "the local DB of version 6 holds version 3's files")
        assert(byName("ttlstoreLoadFilesFetched") == 0 && byName("ttlstoreLoadBytesFetched") == 0)
        assert(read(p, 4).size == 4 * 500)
      }
    }
  }

  test("a store opened where nothing is local fetches every SST file of its snapshot, and counts them") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        (0 until 3).foreach(v => commitVersion(p, v, (0 until 500).map(i => (s"k$v-$i", 0) -> Some(i.toLong)): _*))
        p.doMaintenance()
      }
      withProvider(ttlProvider(dir)) { fresh =>
        val store = fresh.getStore(3)
        val byName = store.metrics.customMetrics.map { case (k, v) => k.name -> v }
        store.abort()
        val ssts = new File(ttlDir(dir), "sst").listFiles()
        assert(byName("ttlstoreLoadFilesFetched") == ssts.length)
        assert(byName("ttlstoreLoadBytesFetched") == ssts.map(_.length()).sum)
        assert(byName("ttlstoreLoadFilesReused") == 0)
      }
    }
  }

  test("the next commit reports the snapshot that maintenance uploaded, however often asked") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        val first = p.getStore(0, None, forceSnapshotOnCommit = true, loadEmpty = false)
        first.put(key("a"), value(1))
        first.commit()
        p.doMaintenance()
        val next = p.getStore(1)
        next.commit()
        def uploaded = next.metrics.customMetrics.collectFirst {
          case (m, v) if m.name == "ttlstoreSnapshotsUploaded" => v
        }
        assert(uploaded.contains(1L))
        assert(uploaded.contains(1L))
        assert(commitVersion(p, 2) == 3)
      }
    }
  }

  test("a snapshot rewritten for the same version is read again, not served from memory") {
    withTempDir { dir =>
      withProvider(ttlProvider(dir)) { p =>
        val files = p.checkpointFiles
        val local = p.localStore
        commitVersion(p, 0, ("a", 0) -> Some(1L))
        local.snapshot(1)
        p.doMaintenance()
        assert(files.manifest(VersionFile(1, None), files.listing().snapshotStamps(VersionFile(1, None)),
          files.listing()).numRows == 1)
        // A retried batch commits version 1 again, differently, and snapshots it again.
        commitVersion(p, 0, ("a", 0) -> Some(1L), ("b", 0) -> Some(1L))
        local.snapshot(1)
        p.doMaintenance()
        val listing = files.listing()
        assert(files.manifest(VersionFile(1, None), listing.snapshotStamps(VersionFile(1, None)), listing).numRows == 2)
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
