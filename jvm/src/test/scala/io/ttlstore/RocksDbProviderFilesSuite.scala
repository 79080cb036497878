package io.ttlstore

import java.io.File

import scala.collection.mutable

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.legacy.RocksDbProviderFiles
import io.ttlstore.store.KeyCodec

/** Spark's RocksDB provider writes the files; RocksDbProviderFiles must read back what it reads back. */
class RocksDbProviderFilesSuite extends AnyFunSuite {
  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
  private val changelogKey = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
  private val codecKey = "spark.sql.streaming.stateStore.compression.codec"

  private def files(dir: File) = new RocksDbProviderFiles(new Path(dir.getAbsolutePath, "0/0"), new Configuration())

  private def replayed(dir: File, version: Long, codec: String): Map[(String, Int), Long] = {
    val rows = mutable.Map.empty[(String, Int), Long]
    val work = new File(dir, "work")
    def keyRow(raw: Array[Byte]) = { val k = RocksDbProviderFiles.wholeKey(raw); KeyCodec.rowAt(2, k, 0, k.length) }
    files(dir).replay(version, codec, work)(
      (k, v) => rows(keyOf(keyRow(k))) = countOf(KeyCodec.rowAt(1, v, 0, v.length)),
      k => rows.remove(keyOf(keyRow(k))))
    assert(!work.exists() || work.list().isEmpty, "the snapshot's working copy is deleted")
    rows.toMap
  }

  for ((changelog, codec) <- Seq((false, "lz4"), (true, "lz4"), (true, "zstd"))) {
    test(s"every version reads as Spark's RocksDB provider reads it (changelog checkpointing $changelog, $codec)") {
      withTempDir { dir =>
        val conf = storeConf(changelogKey -> changelog.toString, codecKey -> codec)
        withProvider(newProvider(RocksDbProvider, dir, conf)) { p =>
          (0 until 8).foreach { v =>
            val changes = (0 until 20).map(i => (s"user${(v * 7 + i) % 31}", i % 3) -> Some(v * 100L + i)) ++
              (0 until 4).map(i => (s"user${(v * 5 + i) % 31}", i % 3) -> None)
            commitVersion(p, v, changes: _*)
            p.doMaintenance()
          }
        }
        val (zips, changelogs) = files(dir).versions()
        assert(zips.nonEmpty && changelogs.nonEmpty == changelog)
        // Retention (minBatchesToRetain = 5) removed the oldest versions' files.
        ((zips ++ changelogs).min to 8L).foreach { v =>
          val expected = withProvider(newProvider(RocksDbProvider, dir, conf))(p => read(p, v))
          assert(expected.nonEmpty)
          assert(replayed(dir, v, codec) === expected, s"version $v")
        }
      }
    }
  }

  test("a missing SST is named with the version that needs it") {
    withTempDir { dir =>
      withProvider(newProvider(RocksDbProvider, dir))(p =>
        (0 until 2).foreach { v =>
          commitVersion(p, v, (s"u$v", 0) -> Some(v.toLong)); p.doMaintenance()
        })
      new File(dir, "0/0/SSTs").listFiles().filter(_.getName.endsWith(".sst")).foreach(FileUtils.delete)
      val e = intercept[TtlStoreException](replayed(dir, 2, "lz4"))
      assert(e.errorName === "LEGACY_FILE_MISSING")
      assert(e.getMessage.contains("SSTs/") && e.getMessage.contains("Version 2"))
    }
  }
}
