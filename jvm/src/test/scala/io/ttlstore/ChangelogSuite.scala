package io.ttlstore

import java.io.{ByteArrayInputStream, File}
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures.withTempDir
import io.ttlstore.checkpoint.{Changelog, ChangelogReader, ChangelogWriter, CheckpointFiles, Compression, LineageItem, TtlRecord, VersionFile}
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.ttl.{TimestampHistogram, TtlPolicy}

class ChangelogSuite extends AnyFunSuite {

  private def write(dir: File, codec: String)(body: ChangelogWriter => Unit): File = {
    val files = new CheckpointFiles(new Path(dir.getAbsolutePath), new Configuration())
    val writer = new ChangelogWriter(files.createAtomic(files.changelogPath(VersionFile(1, None))), codec, None, Nil)
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

  test("docs/checkpoint-format.md is titled with the format version the writers write") {
    val page =
      new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("docs/checkpoint-format.md")), "UTF-8")
    assert(page.linesIterator.next() == s"# Checkpoint format (format version ${CheckpointFiles.FormatVersion})")
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

  test("under checkpoint format v2 a changelog records its checkpoint id and lineage; in v1 neither") {
    withTempDir { dir =>
      val files = new CheckpointFiles(new Path(dir.getAbsolutePath), new Configuration())
      val lineage = Seq(LineageItem(3, "id-3"), LineageItem(4, "id-4"))
      val writer =
        new ChangelogWriter(files.createAtomic(files.changelogPath(VersionFile(5, Some("id-5")))), "lz4", Some("id-5"),
          lineage)
      writer.put(Array[Byte](1), Array[Byte](0, 0, 0, 0, 0, 0, 0, 7))
      writer.commit(rowsAfter = 1, TtlRecord(TtlPolicy.Off, None, TimestampHistogram.empty(), None, None, None, None))
      val reader = files.openChangelog(VersionFile(5, Some("id-5")))
      assert(reader.checkpointId.contains("id-5") && reader.lineage == lineage && reader.readAll().size == 1)
      assert(files.lineageOf(5, "id-5") == lineage)
      val v1 = read(write(dir, "lz4")(_ => ()))
      assert(v1.checkpointId.isEmpty && v1.lineage.isEmpty)
    }
  }

  test("a changelog renamed to another checkpoint id is refused as corrupted") {
    withTempDir { dir =>
      val files = new CheckpointFiles(new Path(dir.getAbsolutePath), new Configuration())
      val writer = new ChangelogWriter(files.createAtomic(files.changelogPath(VersionFile(2, Some("a-1")))), "lz4",
        Some("a-1"), Nil)
      writer.commit(rowsAfter = 0, TtlRecord(TtlPolicy.Off, None, TimestampHistogram.empty(), None, None, None, None))
      val root = new File(dir, CheckpointFiles.DirName)
      assert(new File(root, "2_a-1.changelog").renameTo(new File(root, "2_b-2.changelog")))
      val e = intercept[TtlStoreException](files.openChangelog(VersionFile(2, Some("b-2"))))
      assert(e.errorName == "CHANGELOG_CORRUPTED" && e.getMessage.contains("checkpoint id a-1"))
    }
  }

  test("a changelog of format 2 (before checkpoint ids) still reads") {
    // Format 2, byte for byte: header, then the lz4 body of one put and the end record, no ids.
    val body = new java.io.ByteArrayOutputStream()
    val crc = new java.util.zip.CRC32C()
    val data = new java.io.DataOutputStream(new java.util.zip.CheckedOutputStream(body, crc))
    data.writeByte(1); data.writeInt(1); data.write(Array[Byte](9)); data.writeInt(8); data.write(new Array[Byte](8))
    data.writeByte(0); data.writeLong(1L); data.writeLong(1L)
    val ttl =
      TtlRecord(TtlPolicy.Off, None, TimestampHistogram.empty(), None, None, None, None).toJson.getBytes("UTF-8")
    data.writeInt(ttl.length); data.write(ttl); data.flush()
    val plain = body.toByteArray ++ java.nio.ByteBuffer.allocate(4).putInt(crc.getValue.toInt).array()
    val file = new java.io.ByteArrayOutputStream()
    file.write("TTLC".getBytes("US-ASCII")); file.write(2); file.write(3); file.write("lz4".getBytes("US-ASCII"))
    val compressed = Compression.codec("lz4").compressedOutputStream(file)
    compressed.write(plain); compressed.close()
    val reader = new ChangelogReader("old.changelog", 1, new ByteArrayInputStream(file.toByteArray))
    assert(reader.formatVersion == 2 && reader.checkpointId.isEmpty && reader.lineage.isEmpty)
    assert(reader.readAll().map(_.asInstanceOf[Changelog.Put].key.toSeq) == Seq(Seq[Byte](9)) && reader.rowsAfter == 1)
  }
}
