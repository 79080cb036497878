package io.ttlstore

import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.{SnapshotManifest, SstFile, TtlRecord}

/** The JSON of ttlstore's files (changelogs' TTL records, snapshots' manifests), read and written without reflection. */
class CheckpointJsonSuite extends AnyFunSuite {
  private implicit val formats: Formats = DefaultFormats

  private val full = TtlRecord(600000L, "OnCreateAndWrite", "NeverReturnExpired", "EventTime", Some("ts"), Some(9L),
    1000L, List(List(1763800000000L, 42L), List(1763800001000L, 7L)), Some(3L), Some(11L), Some(5L), Some(8L))
  private val bare = TtlRecord(0L, "OnCreateAndWrite", "NeverReturnExpired", "ProcessingTime", None, None, 1L, Nil)

  test("a record reads back as written, with and without its optional fields") {
    Seq(full, bare).foreach(r => assert(TtlRecord.fromJson(r.toJson) == r))
  }

  test(
    "files of earlier ttlstore versions (json4s reflection, nulls or absent fields) read the same, and they read ours") {
    Seq(full, bare).foreach { r =>
      assert(TtlRecord.fromJson(Serialization.write(r)) == r)
      assert(Serialization.read[TtlRecord](r.toJson) == r)
    }
    val withNulls = """{"ttlMs":5,"updateType":"OnCreateAndWrite","stateVisibility":"NeverReturnExpired",""" +
      """"timeCharacteristic":"ProcessingTime","eventTimeColumn":null,"streamTimeMs":null,""" +
      """"histogramGranularityMs":1,"histogram":[[10,2]]}"""
    assert(TtlRecord.fromJson(withNulls) == bare.copy(ttlMs = 5L, histogram = List(List(10L, 2L))))
  }

  test("a record missing a field it needs, or with one of the wrong type, fails naming the field") {
    val noTtl = intercept[IllegalArgumentException](TtlRecord.fromJson(bare.toJson.replace("\"ttlMs\":0,", "")))
    assert(noTtl.getMessage.contains("ttlMs"))
    val badNow =
      intercept[IllegalArgumentException](TtlRecord.fromJson(full.toJson.replace("\"nowMs\":11", "\"nowMs\":\"x\"")))
    assert(badNow.getMessage.contains("nowMs"))
  }

  private val manifest = SnapshotManifest(3, 12L, 1000L,
    Seq(SstFile("000008.sst", "000008-u1.sst", 4096L, 4294967295L), SstFile("000009.sst", "000009-u2.sst", 10L, 7L)),
    1763800000000L, Some(full), Some("id-12"))

  test("a snapshot manifest reads back as written, and as earlier versions (json4s reflection) wrote it") {
    Seq(manifest, manifest.copy(ttl = None, checkpointId = None, sstFiles = Nil)).foreach { m =>
      assert(SnapshotManifest.fromJson(m.toJson) == m)
      assert(SnapshotManifest.fromJson(Serialization.write(m)) == m)
      assert(Serialization.read[SnapshotManifest](m.toJson) == m)
    }
  }

  test("a manifest whose SST entry lacks a field fails naming it") {
    val e = intercept[IllegalArgumentException](SnapshotManifest.fromJson(manifest.toJson.replace(",\"crc32c\":7", "")))
    assert(e.getMessage.contains("crc32c"))
  }
}
