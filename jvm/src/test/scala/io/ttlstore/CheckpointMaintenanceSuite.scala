package io.ttlstore

import java.io.File

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.VersionFile
import io.ttlstore.config.SparkStateSettings.MaxVersionsToDeletePerMaintenance

/**
 * What maintenance does to the checkpoint: every file below ttlstore/, snapshots that upload only what changed,
 * cleanup of what no retained version needs (bounded per run), the snapshot reported to Spark, and a task beside it.
 */
class CheckpointMaintenanceSuite extends AnyFunSuite {

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
}
