package io.ttlstore

import java.io.File

import scala.collection.mutable

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.streaming.state.StateStoreProvider
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.legacy.HdfsProviderFiles
import io.ttlstore.store.codec.KeyCodec

/** Spark's HDFS provider writes the files; HdfsProviderFiles must read back what it reads back. */
class HdfsProviderFilesSuite extends AnyFunSuite {
  private val codecKey = "spark.sql.streaming.stateStore.compression.codec"

  /** Ten versions of puts, updates and removes, with snapshots where maintenance takes them. */
  private def writeVersions(provider: StateStoreProvider): Unit = {
    (0 until 10).foreach { v =>
      val changes = (0 until 20).map(i => (s"user${(v * 7 + i) % 31}", i % 3) -> Some(v * 100L + i)) ++
        (0 until 4).map(i => (s"user${(v * 5 + i) % 31}", i % 3) -> None)
      commitVersion(provider, v, changes: _*)
      if (v % 4 == 3) provider.doMaintenance()
    }
  }

  private def replayed(dir: File, version: Long, codec: String): Map[(String, Int), Long] = {
    val rows = mutable.Map.empty[(String, Int), Long]
    val files = new HdfsProviderFiles(new Path(dir.getAbsolutePath, "0/0"), new Configuration())
    files.replay(version, codec)(
      (k, v) => rows(keyOf(KeyCodec.rowAt(2, k, 0, k.length))) = countOf(KeyCodec.rowAt(1, v, 0, v.length)),
      k => rows.remove(keyOf(KeyCodec.rowAt(2, k, 0, k.length))))
    rows.toMap
  }

  for (codec <- Seq("lz4", "zstd")) {
    test(s"every version reads as Spark's HDFS provider reads it ($codec)") {
      withTempDir { dir =>
        val conf = storeConf(codecKey -> codec)
        withProvider(newProvider(HdfsProvider, dir, conf))(writeVersions)
        val (deltas, snapshots) =
          new HdfsProviderFiles(new Path(dir.getAbsolutePath, "0/0"), new Configuration()).versions()
        assert(deltas.nonEmpty && snapshots.nonEmpty, "the scenario must have deltas and snapshots")
        (1L to 10L).foreach { v =>
          val expected = withProvider(newProvider(HdfsProvider, dir, conf))(p => read(p, v))
          assert(replayed(dir, v, codec) === expected, s"version $v")
          assert(expected.nonEmpty)
        }
      }
    }
  }

  test("a missing delta is named with the version that needs it") {
    withTempDir { dir =>
      withProvider(newProvider(HdfsProvider, dir))(p =>
        (0 until 3).foreach(v =>
          commitVersion(p, v, (s"u$v", 0) -> Some(v.toLong))))
      new File(dir, "0/0/2.delta").delete()
      val e = intercept[TtlStoreException](replayed(dir, 3, "lz4"))
      assert(e.errorName === "LEGACY_FILE_MISSING")
      assert(e.getMessage.contains("2.delta") && e.getMessage.contains("Version 3"))
    }
  }

  test("a truncated delta is named as damaged, with its version") {
    withTempDir { dir =>
      withProvider(newProvider(HdfsProvider, dir))(p =>
        (0 until 2).foreach(v =>
          commitVersion(p, v, (1 to 200).map(i => (s"user$i", v) -> Some(i.toLong)): _*)))
      val delta = new File(dir, "0/0/2.delta")
      val bytes = FileUtils.readFileToByteArray(delta)
      FileUtils.writeByteArrayToFile(delta, bytes.take(bytes.length / 2))
      new File(dir, "0/0/.2.delta.crc").delete()
      val e = intercept[TtlStoreException](replayed(dir, 2, "lz4"))
      assert(e.errorName === "LEGACY_FILE_CORRUPTED")
      assert(e.getMessage.contains("2.delta (version 2"))
    }
  }
}
