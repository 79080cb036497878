package io.ttlstore.store.local

import java.io.File

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.streaming.state.StateStoreProvider
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.{CheckpointFiles, LineageItem, VersionFile}
import io.ttlstore.config.SnapshotRepair
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.ttl.SystemClock

/**
 * What a load will do, read from its plan before anything is loaded: the checkpoints are written by
 * real providers, and [[VersionLoads]] plans over their files (the provider suites prove the plans
 * carried out).
 */
class VersionLoadsSuite extends AnyFunSuite {
  private val V2 = "spark.sql.streaming.stateStore.checkpointFormatVersion" -> "2"

  /** A checkpoint of `versions` commits (minDeltasForSnapshot 3, maintenance after each); their ids. */
  private def written(dir: File, versions: Int, v2: Boolean): IndexedSeq[Option[String]] = {
    val p: StateStoreProvider = newProvider(TtlProvider, dir, if (v2) storeConf(V2) else storeConf())
    try {
      var id: Option[String] = None
      (0 until versions).map { v =>
        val store = p.getStore(v, id)
        store.put(key(s"k$v"), value(v.toLong))
        store.commit()
        id = store.getStateStoreCheckpointInfo().stateStoreCkptId
        p.doMaintenance()
        id
      }
    } finally p.close()
  }

  private def planner(dir: File, format: CheckpointFormat): VersionLoads = {
    val files = new CheckpointFiles(new org.apache.hadoop.fs.Path(dir.getAbsolutePath, "0/0"), new Configuration())
    val adoptions = new Adoptions(files, dir, "lz4", SystemClock, (_, k) => k)
    new VersionLoads(files, adoptions, format, SnapshotRepair.SparkDefault)
  }

  private def build(planned: Planned): LoadPlan.Build = planned.plan match {
    case b: LoadPlan.Build => b
    case other => fail(s"expected a build, got $other")
  }

  /** The plan of a load that must not list the checkpoint. */
  private def unlisted(planned: Planned): LoadPlan = {
    assert(planned.listing.isEmpty, "listed")
    planned.plan
  }

  test("by version, a load restores the newest snapshot at or below the version and replays the changelogs after it") {
    withTempDir { dir =>
      written(dir, 5, v2 = false)
      val loads = planner(dir, CheckpointFormat.ByVersion)
      val plan = build(loads.plan(VersionFile(5, None), loadEmpty = false, held = None))
      assert(plan.route.base == LoadBase.Snapshot(VersionFile(3, None)))
      assert(plan.route.changelogs == Vector(VersionFile(4, None), VersionFile(5, None)))
      assert(plan.route.lineage.isEmpty)
      assert(plan.repair.fallbacks.map(_.base) == Seq(0L), "snapshot repair may rebuild from the empty state")
      assert(plan.repair.fallbacks.map(loads.route) == Seq(Route.byVersion(LoadBase.Empty(0), 5)))
    }
  }

  test(
    "by version, a copy that holds the version is reused, and one that holds an older version replays only the rest") {
    withTempDir { dir =>
      written(dir, 5, v2 = false)
      val loads = planner(dir, CheckpointFormat.ByVersion)
      assert(unlisted(loads.plan(VersionFile(5, None), loadEmpty = false, Some(VersionFile(5, None)))) == LoadPlan.Reuse)
      val plan = build(loads.plan(VersionFile(5, None), loadEmpty = false, Some(VersionFile(4, None))))
      assert(plan.route.base == LoadBase.Held(4) && plan.route.changelogs == Vector(VersionFile(5, None)))
    }
  }

  test("Spark's loadEmpty plans the empty state as the version asked, without listing the checkpoint") {
    withTempDir { dir =>
      val loads = planner(dir, CheckpointFormat.ByVersion)
      val plan = unlisted(loads.plan(VersionFile(7, None), loadEmpty = true, held = None))
      assert(plan == LoadPlan.build(7, Route(LoadBase.Empty(7), Vector.empty, None), Nil))
    }
  }

  test("by checkpoint id, a load follows the lineage of its id back to that lineage's snapshot") {
    withTempDir { dir =>
      val ids = written(dir, 5, v2 = true)
      val loads = planner(dir, CheckpointFormat.ByCheckpointId)
      val plan = build(loads.plan(VersionFile(5, ids(4)), loadEmpty = false, held = None))
      assert(plan.route.base == LoadBase.Snapshot(VersionFile(3, ids(2))))
      assert(plan.route.changelogs == Vector(VersionFile(4, ids(3)), VersionFile(5, ids(4))))
      assert(plan.route.lineage.contains((2 to 4).map(i => LineageItem(i + 1L, ids(i).get)).toVector))
    }
  }

  test("by checkpoint id, a repair's older route is walked back along the lineage only when the load comes to it") {
    withTempDir { dir =>
      val ids = written(dir, 5, v2 = true)
      val loads = planner(dir, CheckpointFormat.ByCheckpointId)
      val plan = build(loads.plan(VersionFile(5, ids(4)), loadEmpty = false, held = None))
      assert(plan.repair.anyOlder && plan.repair.fallbacks.map(_.base) == Seq(0L))
      assert(plan.repair.fallbacks.forall(_.route.isInstanceOf[Fallback.AlongLineage]), "not walked while planning")
      val walked = loads.route(plan.repair.fallbacks.head)
      assert(walked.base == LoadBase.Empty(0))
      assert(walked.changelogs == (0 to 4).map(i => VersionFile(i + 1L, ids(i))).toVector)
    }
  }

  test("by checkpoint id, a copy holding another attempt's version is not reused") {
    withTempDir { dir =>
      val ids = written(dir, 2, v2 = true)
      val loads = planner(dir, CheckpointFormat.ByCheckpointId)
      val plan = loads.plan(VersionFile(2, ids(1)), loadEmpty = false, Some(VersionFile(2, Some("another-attempt"))))
      assert(build(plan).route.base == LoadBase.Empty(0))
    }
  }

  test("a store that loads by version refuses a checkpoint id, and one that loads by id a missing id, by name") {
    withTempDir { dir =>
      written(dir, 2, v2 = true)
      val byVersion = planner(dir, CheckpointFormat.ByVersion)
      val withId = intercept[TtlStoreException](
        byVersion.plan(VersionFile(2, Some("an-id")), loadEmpty = false, held = None))
      assert(withId.errorName == "CHECKPOINT_FORMAT_MISMATCH")
      val byId = planner(dir, CheckpointFormat.ByCheckpointId)
      val withoutId = intercept[TtlStoreException](
        byId.plan(VersionFile(2, None), loadEmpty = false, held = None))
      assert(withoutId.errorName == "CHECKPOINT_ID_MISSING" && withoutId.getMessage.contains("2"))
    }
  }
}
