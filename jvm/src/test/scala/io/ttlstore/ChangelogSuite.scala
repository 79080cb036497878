package io.ttlstore

import java.io.{ByteArrayInputStream, File}
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures.withTempDir
import io.ttlstore.checkpoint.{Changelog, ChangelogReader, ChangelogWriter, CheckpointFiles, TtlRecord}
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.ttl.{TimestampHistogram, TtlPolicy}

class ChangelogSuite extends AnyFunSuite {

  private def write(dir: File, codec: String)(body: ChangelogWriter => Unit): File = {
    val files = new CheckpointFiles(new Path(dir.getAbsolutePath), new Configuration())
    val writer = new ChangelogWriter(files.createAtomic(files.changelogPath(1)), codec)
    body(writer)
    writer.commit(rowsAfter = 42, TtlRecord(TtlPolicy.Off, None, TimestampHistogram.empty(), None, None, None, None))
    new File(new File(dir, CheckpointFiles.DirName), "1.changelog")
  }

  private def read(file: File): ChangelogReader =
    new ChangelogReader(file.getPath, 1, new ByteArrayInputStream(Files.readAllBytes(file.toPath)))

  Seq("lz4", "zstd", "snappy", "lzf").foreach { codec =>
    test(s"puts and deletes read back in order with the $codec codec") {
      withTempDir { dir =>
        val file = write(dir, codec) { w =>
          w.put(Array[Byte](1), Array[Byte](0, 0, 0, 0, 0, 0, 0, 7, 1, 2))
          w.delete(Array[Byte](2, 2))
          w.put(Array[Byte](), Array[Byte]())
        }
        val reader = read(file)
        val records = reader.readAll()
        assert(records.size == 3)
        assert(records(0).asInstanceOf[Changelog.Put].value.toSeq == Seq[Byte](0, 0, 0, 0, 0, 0, 0, 7, 1, 2))
        assert(records(1).asInstanceOf[Changelog.Delete].key.toSeq == Seq[Byte](2, 2))
        assert(records(2).asInstanceOf[Changelog.Put].key.isEmpty)
        assert(reader.rowsAfter == 42)
      }
    }
  }

  test("a codec given by Spark's class name is written under its short name") {
    withTempDir { dir =>
      val file = write(dir, "org.apache.spark.io.ZStdCompressionCodec")(_.delete(Array[Byte](1)))
      val bytes = Files.readAllBytes(file.toPath)
      assert(new String(bytes.slice(6, 10), "US-ASCII") == "zstd")
      assert(read(file).readAll().size == 1)
    }
  }

  test("the header names the format and the codec in plain bytes") {
    withTempDir { dir =>
      val bytes = Files.readAllBytes(write(dir, "zstd")(_ => ()).toPath)
      assert(new String(bytes.take(4), "US-ASCII") == "TTLC")
      assert(bytes(4) == Changelog.FormatVersion)
      assert(bytes(5) == 4 && new String(bytes.slice(6, 10), "US-ASCII") == "zstd")
    }
  }

  test("a file cut short is reported as truncated, naming the file and version") {
    withTempDir { dir =>
      val file = write(dir, "lz4") { w => (1 to 1000).foreach(i => w.put(BigInt(i).toByteArray, new Array[Byte](64))) }
      val bytes = Files.readAllBytes(file.toPath)
      val e = intercept[TtlStoreException] {
        new ChangelogReader(file.getPath, 1, new ByteArrayInputStream(bytes.take(bytes.length / 2))).readAll()
      }
      assert(Set("CHANGELOG_TRUNCATED", "CHANGELOG_CORRUPTED")(e.errorName))
      assert(e.getMessage.contains(file.getPath) && e.getMessage.contains("version 1"))
      val headerOnly = intercept[TtlStoreException] {
        new ChangelogReader(file.getPath, 1, new ByteArrayInputStream(bytes.take(3))).readAll()
      }
      assert(headerOnly.errorName == "CHANGELOG_TRUNCATED")
    }
  }

  test("a file that is not a changelog, or from a newer format, is refused") {
    val garbage = intercept[TtlStoreException] {
      new ChangelogReader("x.changelog", 3, new ByteArrayInputStream("hello world".getBytes)).readAll()
    }
    assert(garbage.errorName == "CHANGELOG_CORRUPTED")
    val newer = "TTLC".getBytes ++ Array[Byte](99, 3) ++ "lz4".getBytes
    val e = intercept[TtlStoreException](new ChangelogReader("y.changelog", 3, new ByteArrayInputStream(newer)))
    assert(e.errorName == "FORMAT_TOO_NEW" && e.getMessage.contains("y.changelog"))
  }
}
