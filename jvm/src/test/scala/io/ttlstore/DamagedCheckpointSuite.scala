package io.ttlstore

import java.io.{File, RandomAccessFile}

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ProviderFixtures._
import io.ttlstore.StoreFixtures._
import io.ttlstore.config.SparkStateSettings.AutoSnapshotRepairMaxReplay
import io.ttlstore.store.version.StoreMetrics

/**
 * A damaged or missing checkpoint file fails the load by name (the file, the version), or is repaired around as
 * Spark's autoSnapshotRepair does; a failed load never changes the committed state.
 */
class DamagedCheckpointSuite extends AnyFunSuite {

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
}
