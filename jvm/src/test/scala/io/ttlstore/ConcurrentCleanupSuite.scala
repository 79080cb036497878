package io.ttlstore

import java.io.File
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.CheckpointFiles
import io.ttlstore.errors.TtlStoreException

/**
 * Two instances of one store in one checkpoint: a stopped query's, still loaded, whose maintenance
 * uploads a newer snapshot and deletes what no retained version needs, and a restarted query's,
 * loading the latest version meanwhile. The cleanup may delete the changelogs the load listed; the
 * load then loads from the newer snapshot, as every retained version can. A file system that stops
 * answering is no such change: the load fails naming the file it could not read. A load that restores
 * a snapshot fetches the changelogs after it meanwhile, and still names a damaged one.
 */
class ConcurrentCleanupSuite extends AnyFunSuite {
  private def conf(settings: (String, String)*): StateStoreConf = storeConf(
    Seq("spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "2", "spark.sql.streaming.minBatchesToRetain" -> "1")
      ++ settings: _*)

  private def instance(dir: File, settings: (String, String)*): StateStoreProvider =
    newProvider(TtlProvider, dir, conf(settings: _*), location = Some(HookedFileSystem.location(dir)),
      hadoop = HookedFileSystem.conf)

  private def changelogs(dir: File): Seq[String] =
    Option(new File(dir, s"0/0/${CheckpointFiles.DirName}").list()).toSeq.flatten.filter(_.endsWith(".changelog"))

  private val expected = (0 until 7).map(v => (s"k$v", 0) -> v.toLong).toMap

  /** Commits versions 1 to 7 (key k<v-1> each) with ids when `v2`; maintenance after version 2 only. */
  private def commitSeven(p: StateStoreProvider, v2: Boolean): Option[String] =
    (0 until 7).foldLeft(Option.empty[String]) { (id, v) =>
      val store = if (v2) p.getStore(v.toLong, id) else p.getStore(v.toLong)
      store.put(key(s"k$v"), value(v.toLong))
      store.commit()
      if (v + 1 == 2) p.doMaintenance()
      store.getStateStoreCheckpointInfo().stateStoreCkptId
    }

  /** The first file the restarted instance's replay opens: version 3's changelog. */
  private val firstChangelog = (name: String) => name.startsWith("3") && name.endsWith(".changelog")

  private def loadsWhileTheOtherCleansUp(
      v2: Boolean, opening: String => Boolean, settings: (String, String)*): Unit = withTempDir { dir =>
    withProvider(instance(dir, settings: _*)) { stopped =>
      val last = commitSeven(stopped, v2)
      assert(changelogs(dir).exists(_.startsWith("3")), changelogs(dir))
      withProvider(instance(dir, settings: _*)) { restarted =>
        val before = HookedFileSystem.fired
        // Between the restarted instance's listing and its opening of a file it listed, the stopped
        // one's maintenance uploads the snapshot of version 6 and deletes everything older.
        HookedFileSystem.once(p => opening(p.getName)) {
          stopped.doMaintenance()
        }
        val store = if (v2) restarted.getReadStore(7, last) else restarted.getReadStore(7)
        try assert(contents(store) == expected)
        finally store.release()
        assert(HookedFileSystem.fired == before + 1)
        assert(!changelogs(dir).exists(_.startsWith("3")), changelogs(dir))
      }
    }
  }

  test("a load whose listed changelogs another instance's cleanup deleted loads from the newer snapshot") {
    loadsWhileTheOtherCleansUp(v2 = false, firstChangelog)
  }

  test("a load whose listed snapshot another instance's cleanup deleted loads from the newer snapshot") {
    loadsWhileTheOtherCleansUp(v2 = false, _ == "2.snapshot")
  }

  test("under checkpoint format v2, such a load walks its lineage to the newer snapshot") {
    loadsWhileTheOtherCleansUp(v2 = true, firstChangelog,
      "spark.sql.streaming.stateStore.checkpointFormatVersion" -> "2")
  }

  /**
   * Commits versions 1 to 7, then loads 7 in a new instance (which fetches the snapshot of version 2
   * and the changelogs after it at once), the file system going down as `down` has it, `damage` first
   * done to version 3's changelog; returns the load's error, and checks that version 7 loads as
   * committed once the file system answers again (and the file is mended).
   */
  private def failedLoad(down: (=> TtlStoreException) => TtlStoreException,
      damage: File => Unit = _ => ()): TtlStoreException = withTempDir { dir =>
    val e = withProvider(instance(dir)) { stopped =>
      commitSeven(stopped, v2 = false)
      val changelog = new File(dir, s"0/0/${CheckpointFiles.DirName}/3.changelog")
      val committed = java.nio.file.Files.readAllBytes(changelog.toPath)
      damage(changelog)
      val failure = withProvider(instance(dir)) { restarted =>
        down(intercept[TtlStoreException](restarted.getReadStore(7)))
      }
      java.nio.file.Files.write(changelog.toPath, committed)
      failure
    }
    withProvider(instance(dir)) { again =>
      val store = again.getReadStore(7)
      try assert(contents(store) == expected)
      finally store.release()
    }
    e
  }

  test("a load whose file system stops answering fails naming the file it could not read, listing nothing again") {
    // Down once the snapshot (the zip of its small files and manifest) was opened: the SST files the manifest names
    // are opened after it, so at least they are refused, whatever order the changelogs fetched beside them take.
    val e = failedLoad(HookedFileSystem.downFrom(_.getName == "2.snapshot")(_))
    assert(e.errorName == "CHECKPOINT_READ_FAILED")
    assert(raw"Reading \S+/0/0/ttlstore/(sst/\S+\.sst|[3-7]\.changelog) ".r.findFirstIn(e.getMessage).nonEmpty,
      e.getMessage)
    assert(e.getMessage.contains("not known to be damaged"), e.getMessage)
    assert(e.getSuppressed.isEmpty, e.getSuppressed.toSeq)
  }

  test("a damaged changelog keeps its own error when the listing after it fails too") {
    // Down at the second listing of the store's files: the one after the damaged changelog failed to replay.
    val e = failedLoad(HookedFileSystem.downAtListing(2, _.getName == CheckpointFiles.DirName)(_),
      damage = f => java.nio.file.Files.write(f.toPath, Array.fill[Byte](f.length.toInt)(7)))
    assert(e.errorName == "CHANGELOG_CORRUPTED")
    assert(e.getMessage.contains("3.changelog"), e.getMessage)
    assert(e.getSuppressed.exists(_.isInstanceOf[java.net.ConnectException]), e.getSuppressed.toSeq)
  }

  test("a load that restores a snapshot fetches the changelogs after it while the snapshot's files come in") {
    withTempDir { dir =>
      withProvider(instance(dir))(commitSeven(_, v2 = false))
      val changelogFetched = new CountDownLatch(1)
      val overlapped = new AtomicBoolean(false)
      withProvider(instance(dir)) { restarted =>
        // An SST's download waits for a changelog's: without fetching ahead, none starts before replay.
        HookedFileSystem.onEveryOpen { p =>
          if (p.getName.endsWith(".changelog")) changelogFetched.countDown()
          if (p.getName.endsWith(".sst") && changelogFetched.await(10, TimeUnit.SECONDS)) overlapped.set(true)
        } {
          val store = restarted.getReadStore(7)
          try assert(contents(store) == expected)
          finally store.release()
        }
      }
      assert(overlapped.get, "no changelog was fetched while the snapshot's SST files came in")
    }
  }
}
