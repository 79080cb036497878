package io.ttlstore

import java.io.File
import java.nio.charset.StandardCharsets
import java.util.zip.{ZipEntry, ZipInputStream, ZipOutputStream}

import scala.collection.mutable

import org.apache.commons.io.{FileUtils, IOUtils}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.legacy.RocksDbProviderFiles
import io.ttlstore.store.codec.KeyCodec

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

  /** Writes the snapshot zip of `version` again with its metadata's first line set to `header`. */
  private def relabel(dir: File, version: Long, header: String): Unit = {
    val zip = new File(dir, s"0/0/$version.zip")
    val in = new ZipInputStream(new java.io.FileInputStream(zip))
    val entries = Iterator.continually(in.getNextEntry).takeWhile(_ != null)
      .map(e => e.getName -> IOUtils.toByteArray(in)).toList
    in.close()
    val out = new ZipOutputStream(new java.io.FileOutputStream(zip))
    entries.foreach { case (name, bytes) =>
      out.putNextEntry(new ZipEntry(name))
      val text = new String(bytes, StandardCharsets.UTF_8)
      out.write(
        if (name == "metadata") (header + text.dropWhile(_ != '\n')).getBytes(StandardCharsets.UTF_8) else bytes)
      out.closeEntry()
    }
    out.close()
  }

  test(
    "a snapshot whose metadata says v2, as Spark 4.0 writes it after a format v2 query, reads as v1; v3 is refused") {
    withTempDir { dir =>
      withProvider(newProvider(RocksDbProvider, dir))(p =>
        (0 until 2).foreach { v => commitVersion(p, v, (s"u$v", 0) -> Some(v.toLong)); p.doMaintenance() })
      val expected = replayed(dir, 2, "lz4")
      assert(expected.size === 2)
      relabel(dir, 2, "v2")
      assert(replayed(dir, 2, "lz4") === expected)
      relabel(dir, 2, "v3")
      val e = intercept[TtlStoreException](replayed(dir, 2, "lz4"))
      assert(e.errorName === "LEGACY_FORMAT_TOO_NEW")
      assert(e.getMessage.contains("2.zip") && e.getMessage.contains("v3") && e.getMessage.contains("v1, v2"))
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
