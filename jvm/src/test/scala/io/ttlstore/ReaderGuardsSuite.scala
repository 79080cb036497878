package io.ttlstore

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, EOFException, IOException}

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.{Compression, FileNames, SnapshotManifest, SstFile, Streams}

/** What a reader takes from a damaged or crafted checkpoint file before it touches a path or allocates. */
class ReaderGuardsSuite extends AnyFunSuite {

  test("only a plain file name may become a path below a restore directory") {
    Seq("000008.sst", "OPTIONS-000007", "CURRENT").foreach(n => assert(FileNames.isPlain(n), n))
    Seq("", ".", "..", "../x", "a/b", "a\\b", "/etc/passwd", "x\u0000", "s3a:x.sst", null).foreach(n =>
      assert(!FileNames.isPlain(n), String.valueOf(n)))
  }

  test("a length field larger than the stream fails at the stream's end") {
    val in = new ByteArrayInputStream(Array.fill[Byte](10)(1))
    assertThrows[EOFException](Streams.readExactly(in, Int.MaxValue))
  }

  test("a length beyond the first chunk is read whole") {
    val bytes = Array.tabulate[Byte](3 << 20)(_.toByte)
    assert(Streams.readExactly(new ByteArrayInputStream(bytes), bytes.length) sameElements bytes)
  }

  private val sst = SstFile("000008.sst", "000008-uuid.sst", 100L, 7L)
  private def manifest(ssts: SstFile*) = SnapshotManifest(2, 3L, 10L, ssts, 0L, ttl = None, checkpointId = None)

  test("a manifest is usable only for its own version, with plain, distinct SST names and sizes") {
    assert(SnapshotManifest.problem(manifest(sst), 3L, None) === None)
    assert(SnapshotManifest.problem(manifest(sst), 4L, None).exists(_.contains("version 3")))
    assert(SnapshotManifest.problem(manifest(sst.copy(localName = "../../x.sst")), 3L, None).exists(
        _.contains("../../x.sst")))
    assert(SnapshotManifest.problem(manifest(sst.copy(dfsName = "../other/x.sst")), 3L, None).isDefined)
    assert(SnapshotManifest.problem(manifest(sst.copy(sizeBytes = -1)), 3L, None).isDefined)
    assert(SnapshotManifest.problem(manifest(sst, sst), 3L, None).exists(_.contains("twice")))
  }

  test("a manifest is usable only for the checkpoint id its file is named by") {
    val withId = manifest(sst).copy(checkpointId = Some("a-1"))
    assert(SnapshotManifest.problem(withId, 3L, Some("a-1")) === None)
    assert(SnapshotManifest.problem(withId, 3L, Some("b-2")).exists(_.contains("checkpoint id a-1")))
    assert(SnapshotManifest.problem(withId, 3L, None).isDefined)
    assert(SnapshotManifest.problem(manifest(sst), 3L, Some("a-1")).isDefined)
  }

  private def lz4(bytes: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val z = Compression.codec("lz4").compressedOutputStream(out)
    z.write(bytes)
    z.close()
    out.toByteArray
  }

  test("an lz4 stream as Spark's codec writes it reads back whole through the block check") {
    val bytes = Array.tabulate[Byte](300000)(i => (i % 251).toByte)
    val read = Compression.inputStream("lz4", new ByteArrayInputStream(lz4(bytes))).readAllBytes()
    assert(read sameElements bytes)
  }

  test("an lz4 block header claiming more than its block size fails before anything is allocated") {
    val damaged = lz4(Array.fill[Byte](1000)(7))
    // The first block's original length (bytes 13-16, little endian) now claims 1 GiB.
    Seq(13, 14, 15, 16).zip(Seq(0, 0, 0, 0x40)).foreach { case (at, b) => damaged(at) = b.toByte }
    val e = intercept[IOException](Compression.inputStream("lz4", new ByteArrayInputStream(damaged)).readAllBytes())
    assert(e.getMessage.contains("more than its block size"))
  }
}
