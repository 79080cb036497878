package io.ttlstore

import java.io.File

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.CheckpointFiles
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.version.StoreMetrics

/**
 * Checkpoint format v2 at the provider: every commit has its own checkpoint id, and a version is
 * loaded by id. (The Python differential tests and `CheckpointV2EndToEndSuite` prove it as Spark
 * drives it; these pin the provider's side of the contract.)
 */
class CheckpointFormatV2Suite extends AnyFunSuite {
  private val V2 = "spark.sql.streaming.stateStore.checkpointFormatVersion" -> "2"

  private def provider(dir: File, v2: Boolean = true): StateStoreProvider =
    newProvider(TtlProvider, dir, if (v2) storeConf(V2) else storeConf())

  /** Commits `changes` on top of (version, id); returns the new version's checkpoint info. */
  private def commit(p: StateStoreProvider, version: Long, id: Option[String],
      changes: ((String, Int), Option[Long])*): StateStoreCheckpointInfo = {
    val store = p.getStore(version, id)
    changes.foreach {
      case ((user, session), Some(count)) => store.put(key(user, session), value(count))
      case ((user, session), None) => store.remove(key(user, session))
    }
    store.commit()
    store.getStateStoreCheckpointInfo()
  }

  private def readAt(p: StateStoreProvider, version: Long, id: Option[String]): Map[(String, Int), Long] = {
    val store = p.getReadStore(version, id)
    try contents(store)
    finally store.release()
  }

  /** Commits versions 1 to `n` (key k<v-1> each), maintenance after each; returns their checkpoint ids. */
  private def commitWithMaintenance(p: StateStoreProvider, n: Int): IndexedSeq[Option[String]] = {
    var id: Option[String] = None
    (0 until n).map { v =>
      id = commit(p, v, id, (s"k$v", 0) -> Some(v.toLong)).stateStoreCkptId
      p.doMaintenance()
      id
    }
  }

  private def ttlFiles(dir: File): Seq[String] =
    Option(new File(dir, s"0/0/${CheckpointFiles.DirName}").list()).toSeq.flatten.filter(_.endsWith(".changelog")).sorted

  test("each commit returns a new checkpoint id and the id of the version it was built on") {
    withTempDir { dir =>
      withProvider(provider(dir)) { p =>
        val first = commit(p, 0, None, ("a", 0) -> Some(1L))
        assert(first.batchVersion == 1 && first.stateStoreCkptId.isDefined && first.baseStateStoreCkptId.isEmpty)
        val second = commit(p, 1, first.stateStoreCkptId, ("b", 0) -> Some(2L))
        assert(second.batchVersion == 2 && second.baseStateStoreCkptId == first.stateStoreCkptId)
        assert(second.stateStoreCkptId.isDefined && second.stateStoreCkptId != first.stateStoreCkptId)
        assert(ttlFiles(dir) == Seq(s"1_${first.stateStoreCkptId.get}.changelog",
          s"2_${second.stateStoreCkptId.get}.changelog").sorted)
      }
    }
  }

  test("two attempts of one version keep their own files and state, in the same provider and after a restart") {
    withTempDir { dir =>
      val (one, firstTry, retry) = withProvider(provider(dir)) { p =>
        val one = commit(p, 0, None, ("a", 0) -> Some(1L))
        val firstTry = commit(p, 1, one.stateStoreCkptId, ("first", 0) -> Some(1L), ("a", 0) -> None)
        // The batch is run again: the provider holds the first attempt's version 2, and must not build on it.
        val retry = commit(p, 1, one.stateStoreCkptId, ("retry", 0) -> Some(2L))
        assert(
          retry.baseStateStoreCkptId == one.stateStoreCkptId && retry.stateStoreCkptId != firstTry.stateStoreCkptId)
        assert(readAt(p, 2, retry.stateStoreCkptId) == Map(("a", 0) -> 1L, ("retry", 0) -> 2L))
        assert(readAt(p, 2, firstTry.stateStoreCkptId) == Map(("first", 0) -> 1L))
        (one, firstTry, retry)
      }
      assert(ttlFiles(dir).count(_.startsWith("2_")) == 2)
      withProvider(provider(dir)) { p =>
        assert(readAt(p, 2, retry.stateStoreCkptId) == Map(("a", 0) -> 1L, ("retry", 0) -> 2L))
        assert(readAt(p, 2, firstTry.stateStoreCkptId) == Map(("first", 0) -> 1L))
        val three = commit(p, 2, retry.stateStoreCkptId, ("c", 0) -> Some(3L))
        assert(readAt(p, 3, three.stateStoreCkptId) == Map(("a", 0) -> 1L, ("retry", 0) -> 2L, ("c", 0) -> 3L))
        assert(readAt(p, 1, one.stateStoreCkptId) == Map(("a", 0) -> 1L))
      }
    }
  }

  test("a load follows its lineage back to its own snapshot, past another attempt's newer snapshot") {
    withTempDir { dir =>
      // minDeltasForSnapshot is 3: version 3 of each lineage is snapshotted, uploaded by maintenance.
      val (kept, other) = withProvider(provider(dir)) { p =>
        var id: Option[String] = None
        val ids = (0 until 6).map { v =>
          id = commit(p, v, id, (s"k$v", 0) -> Some(v.toLong)).stateStoreCkptId
          p.doMaintenance()
          id
        }
        // A discarded attempt of version 3 (on version 2) with its own snapshot.
        val otherTry = commit(p, 2, ids(1), ("other", 0) -> Some(9L))
        p.doMaintenance()
        (ids, otherTry.stateStoreCkptId)
      }
      val snapshots =
        Option(new File(dir, s"0/0/${CheckpointFiles.DirName}").list()).toSeq.flatten.filter(_.endsWith(".snapshot"))
      assert(snapshots.exists(_.startsWith("3_")), snapshots)
      withProvider(provider(dir)) { p =>
        assert(readAt(p, 6, kept(5)) == (0 until 6).map(v => (s"k$v", 0) -> v.toLong).toMap)
        assert(readAt(p, 3, other) == Map(("k0", 0) -> 0L, ("k1", 0) -> 1L, ("other", 0) -> 9L))
        assert(p.asInstanceOf[TtlStateStoreProvider].localStore.loadedCheckpointId == other)
      }
    }
  }

  test("a damaged snapshot is repaired around with an older snapshot of the lineage, walked back by the changelogs") {
    withTempDir { dir =>
      // minDeltasForSnapshot is 3: versions 3 and 6 are snapshotted, uploaded by maintenance.
      val ids = withProvider(provider(dir))(p => commitWithMaintenance(p, 8))
      val folder = new File(dir, s"0/0/${CheckpointFiles.DirName}")
      val newest = folder.listFiles().filter(_.getName.startsWith("6_")).filter(_.getName.endsWith(".snapshot")).head
      assert(folder.list().exists(n => n.startsWith("3_") && n.endsWith(".snapshot")))
      val f = new java.io.RandomAccessFile(newest, "rw")
      try f.setLength(10)
      finally f.close()
      withProvider(provider(dir)) { p =>
        val store = p.getStore(8, ids(7))
        assert(contents(store) == (0 until 8).map(v => (s"k$v", 0) -> v.toLong).toMap)
        assert(store.metrics.customMetrics(StoreMetrics.SnapshotsRepaired) == 1L)
        store.abort()
      }
      val off = newProvider(TtlProvider, dir,
        storeConf(V2, "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled" -> "false"))
      val e = withProvider(off)(p => intercept[TtlStoreException](p.getStore(8, ids(7))))
      assert(e.errorName == "SNAPSHOT_CORRUPTED" && e.getMessage.contains(newest.getName))
    }
  }

  test("Spark's state reader replays a version from a snapshot of its lineage by checkpoint ids") {
    withTempDir { dir =>
      val ids = withProvider(provider(dir))(p => commitWithMaintenance(p, 5))
      withProvider(provider(dir).asInstanceOf[TtlStateStoreProvider]) { p =>
        // Version 5 replayed from the snapshot of version 3 (snapshotStartBatchId = 2).
        val store = p.replayStateFromSnapshot(3, 5, readOnly = true, ids(2), ids(4))
        try assert(contents(store) == (0 until 5).map(v => (s"k$v", 0) -> v.toLong).toMap)
        finally store.abort()
        val wrongStart = intercept[TtlStoreException](p.replayStateFromSnapshot(3, 5, readOnly = true, ids(1), ids(4)))
        assert(wrongStart.errorName == "SNAPSHOT_NOT_FOUND")
      }
    }
  }

  test("a store written in one checkpoint format is refused in the other, naming what it was asked and has") {
    withTempDir { dir =>
      withProvider(provider(dir, v2 = false))(p => commitVersion(p, 0, ("a", 0) -> Some(1L)))
      val asV2 = withProvider(provider(dir))(p => intercept[TtlStoreException](p.getStore(1, Some("x-1"))))
      assert(asV2.errorName == "CHECKPOINT_FORMAT_MISMATCH" && asV2.getMessage.contains("v1"), asV2.getMessage)
    }
    withTempDir { dir =>
      withProvider(provider(dir))(p => commit(p, 0, None, ("a", 0) -> Some(1L)))
      val asV1 = withProvider(provider(dir, v2 = false))(p => intercept[TtlStoreException](p.getStore(1)))
      assert(asV1.errorName == "CHECKPOINT_ID_MISSING" && asV1.getMessage.contains("without an id"), asV1.getMessage)
    }
  }

  test("a checkpoint id no file carries fails naming the file that would hold it") {
    withTempDir { dir =>
      withProvider(provider(dir))(p => commit(p, 0, None, ("a", 0) -> Some(1L)))
      val missing = withProvider(provider(dir))(p => intercept[TtlStoreException](p.getStore(1, Some("no-such-id"))))
      assert(missing.errorName == "STATE_VERSION_NOT_FOUND" && missing.getMessage.contains("1_no-such-id.changelog"))
    }
  }
}
