package io.ttlstore

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.SnapshotUploader.Stamp
import io.ttlstore.spark.StoreGauge
import io.ttlstore.store.local.StoreFootprint
import io.ttlstore.store.version.{StoreGauges, StoreMetrics}

/** What a store reports of itself per partition ([[StoreGauge]]): -1 where it has no snapshot yet. */
class StoreGaugesSuite extends AnyFunSuite {
  private def values(footprint: StoreFootprint, expiredStored: Long = 0L, nowMs: Long = 10000L) =
    StoreGauges.values(footprint, expiredStored, nowMs).toMap

  test("a store with no snapshot in the checkpoint reports -1 for its version and its age") {
    val v = values(StoreFootprint(None, 0L, 0))
    assert(v(StoreGauge.SnapshotLastUploaded) == -1L && v(StoreGauge.SnapshotAgeMs) == -1L)
  }

  test("a store's snapshot is as old as the time since its manifest was written, never less than 0") {
    assert(values(StoreFootprint(Some(Stamp(7L, 4000L)), 0L, 0))(StoreGauge.SnapshotAgeMs) == 6000L)
    assert(values(StoreFootprint(Some(Stamp(7L, 12000L)), 0L, 0))(StoreGauge.SnapshotAgeMs) == 0L)
    assert(values(StoreFootprint(Some(Stamp(7L, 4000L)), 0L, 0))(StoreGauge.SnapshotLastUploaded) == 7L)
  }

  test("every gauge is reported once, with the store's disk and its expired rows as they stand") {
    val v = values(StoreFootprint(None, 123L, 4), expiredStored = 56L)
    assert(v.keySet == StoreGauge.all.toSet)
    assert(
      v(StoreGauge.LocalBytes) == 123L && v(StoreGauge.FilesNotLocal) == 4L && v(StoreGauge.ExpiredRowsStored) == 56L)
  }

  test("only a lagging snapshot version is worst when lowest") {
    assert(StoreGauge.all.filter(_.worstIsLowest) == Seq(StoreGauge.SnapshotLastUploaded))
  }

  /** The rows of the table under `heading` in docs/monitoring.md, cell by cell. */
  private def rowsUnder(heading: String): Seq[Seq[String]] = {
    val docs = new String(Files.readAllBytes(Paths.get("docs/monitoring.md")), "UTF-8")
    docs.linesIterator.dropWhile(_ != heading).drop(1).takeWhile(!_.startsWith("## "))
      .filter(_.startsWith("| `ttlstore")).map(_.split('|').map(_.trim).toSeq).toSeq
  }

  test("docs/monitoring.md lists every figure with which end is worst and its meaning, in order") {
    assert(rowsUnder("## Each store's figures") == StoreGauge.all.map { g =>
      Seq("", s"`${g.name}`", if (g.worstIsLowest) "lowest" else "highest", g.description.stripPrefix("ttlstore: "))
    })
  }

  test("docs/monitoring.md lists the memory figures of the progress with their meanings, in order") {
    val memory = StoreMetrics.all.filter(_.name.startsWith("ttlstoreMemory"))
    assert(memory.size == 4)
    assert(rowsUnder("## Memory") == memory.map(m => Seq("", s"`${m.name}`", m.desc.stripPrefix("ttlstore: "))))
  }
}
