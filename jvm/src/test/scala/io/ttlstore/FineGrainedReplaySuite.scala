package io.ttlstore

import org.apache.spark.sql.execution.streaming.state._
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.TtlStoreException

/**
 * What Spark's state reader asks of a provider beyond `getReadStore` (`SupportsFineGrainedReplay`):
 * replay from a chosen snapshot, and the change feed. Checked against Spark's HDFS provider, which
 * implements both, on the same versions.
 */
class FineGrainedReplaySuite extends AnyFunSuite {

  /** Seven versions of puts, overwrites and removes, committed on `provider`. */
  private def history(provider: StateStoreProvider): Unit = {
    val versions: Seq[Seq[((String, Int), Option[Long])]] = Seq(
      Seq(("a", 0) -> Some(1L), ("b", 0) -> Some(1L)),
      Seq(("a", 0) -> Some(2L), ("c", 1) -> Some(1L)),
      Seq(("b", 0) -> None, ("d", 0) -> Some(5L)),
      Seq(("a", 0) -> Some(3L)),
      Seq(("c", 1) -> None, ("e", 2) -> Some(7L), ("a", 0) -> None),
      Seq(("b", 0) -> Some(9L)),
      Seq(("d", 0) -> Some(6L)))
    versions.zipWithIndex.foreach { case (changes, v) =>
      commitVersion(provider, v.toLong, changes: _*)
      provider.doMaintenance() // both providers write their snapshots (of 3 and 6) here
    }
  }

  /** Keeps every version loadable (the fixtures keep 5, and old changelogs would be cleaned). */
  private val retainAll = storeConf("spark.sql.streaming.minBatchesToRetain" -> "100")

  /** The versions with a snapshot file in a store directory, whichever provider wrote them. */
  private def snapshotVersions(dir: java.io.File): Set[Long] =
    org.apache.commons.io.FileUtils.listFiles(new java.io.File(dir, "0/0"), Array("snapshot"), true)
      .toArray(Array.empty[java.io.File]).flatMap(_.getName.stripSuffix(".snapshot").toLongOption).toSet

  private def replay(provider: StateStoreProvider): SupportsFineGrainedReplay =
    provider.asInstanceOf[SupportsFineGrainedReplay]

  private def changes(
      provider: StateStoreProvider, from: Long, to: Long): Seq[(String, (String, Int), Option[Long], Long)] = {
    val feed = replay(provider).getStateStoreChangeDataReader(from, to)
    try feed.map { case (kind, k, v, batch) =>
        (RecordType.getRecordTypeAsString(kind), keyOf(k), Option(v).map(countOf), batch)
      }.toList
    finally feed.closeIfNeeded()
  }

  private def withBoth[T](body: (StateStoreProvider, StateStoreProvider) => T): T =
    withBothIn((hdfs, ours, _, _) => body(hdfs, ours))

  private def withBothIn[T](body: (StateStoreProvider, StateStoreProvider, java.io.File, java.io.File) => T): T =
    withTempDir { hdfsDir =>
      withTempDir { ourDir =>
        withProvider(newProvider(HdfsProvider, hdfsDir, retainAll)) { hdfs =>
          withProvider(newProvider(TtlProvider, ourDir, retainAll)) { ours =>
            history(hdfs); history(ours)
            body(hdfs, ours, hdfsDir, ourDir)
          }
        }
      }
    }

  test("the change feed lists every put and remove in order, with its batch id, as Spark's HDFS provider does") {
    withBoth { (hdfs, ours) =>
      assert(changes(ours, 1, 7) == changes(hdfs, 1, 7))
      assert(changes(ours, 3, 5) == changes(hdfs, 3, 5))
      assert(changes(ours, 3, 3) == Seq(("delete", ("b", 0), None, 2L), ("update", ("d", 0), Some(5L), 2L)))
    }
  }

  test("replaying from each snapshot gives the state of every later version, as Spark's HDFS provider has it") {
    withBothIn { (hdfs, ours, _, ourDir) =>
      val snapshots = snapshotVersions(ourDir).toSeq.sorted
      assert(snapshots == Seq(3L, 6L), "minDeltasForSnapshot is 3 in the fixtures")
      for (snapshot <- snapshots; end <- snapshot to 7L) {
        val mine = replay(ours).replayReadStateFromSnapshot(snapshot, end)
        try assert(contents(mine) == read(hdfs, end), s"from $snapshot to $end")
        finally mine.release()
      }
    }
  }

  test("replaying from a version without a snapshot fails naming the snapshots there are") {
    withTempDir { dir =>
      withProvider(newProvider(TtlProvider, dir, retainAll)) { ours =>
        history(ours)
        val e = intercept[TtlStoreException](replay(ours).replayReadStateFromSnapshot(2, 5))
        assert(e.errorName == "SNAPSHOT_NOT_FOUND" && e.getMessage.contains("snapshots: 3, 6"), e.getMessage)
      }
    }
  }

  test("reading state back never writes to the checkpoint") {
    withTempDir { dir =>
      withProvider(newProvider(TtlProvider, dir, retainAll)) { ours => history(ours) }
      def files: Seq[(String, Long)] = {
        val root = new java.io.File(dir, "0/0")
        org.apache.commons.io.FileUtils.listFiles(root, null, true).toArray(Array.empty[java.io.File])
          .map(f => f.getPath -> f.lastModified()).toSeq.sorted
      }
      val before = files
      withProvider(newProvider(TtlProvider, dir, retainAll)) { reader =>
        val store = replay(reader).replayReadStateFromSnapshot(3, 7)
        try contents(store)
        finally store.release()
        changes(reader, 1, 7)
        read(reader, 5)
      }
      assert(files == before)
    }
  }
}
