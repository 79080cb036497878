package io.ttlstore

import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.store.nativelib.NativeFilter
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * The native point read (native_reads_jni.c) inside a real RocksDB (the rocksdbjni Spark ships):
 * it answers as RocksJava's `get` does, from the memtable and from SST files, in both families.
 */
class NativeReadsSuite extends AnyFunSuite {

  private def withHandle[T](body: RocksDbHandle => T): T = {
    val dir = Files.createTempDirectory("ttlstore-reads").toFile
    val handle = RocksDbHandle.open(dir, "reads-test", TtlStoreSettings.parse(Map.empty))
    try body(handle)
    finally { handle.close(); FileUtils.deleteQuietly(dir) }
  }

  private def bytes(s: String): Array[Byte] = s.getBytes("UTF-8")

  private val longKey = bytes("k" * 4096)
  private val rows = Seq(bytes("a") -> bytes("1"), bytes("empty") -> Array.emptyByteArray,
    longKey -> bytes("v" * 10000), bytes("z") -> bytes("26"))
  private val missing = Seq(bytes("b"), bytes(""), bytes("k" * 4095), bytes("zz"))

  test(s"the point read binds to the loaded RocksDB (${NativeFilter.platform})") {
    assert(NativeFilter.loader().reads.isDefined)
    withHandle(h => assert(h.readsNatively))
  }

  test("a read returns the stored value, empty and large values and keys too, and null for a missing key") {
    withHandle { h =>
      rows.foreach { case (k, v) => h.put(k, v) }
      rows.foreach { case (k, v) => assert(h.get(k).toSeq == v.toSeq) }
      missing.foreach(k => assert(h.get(k) == null))
    }
  }

  test("rows in SST files are found as those in the memtable, and a deleted one is gone") {
    withHandle { h =>
      rows.foreach { case (k, v) => h.put(k, v) }
      val copy = Files.createTempDirectory("ttlstore-reads-flush").toFile
      try h.checkpointTo(new java.io.File(copy, "copy")) // flushes the memtable into an SST file
      finally FileUtils.deleteQuietly(copy)
      assert(h.longProperty("rocksdb.num-entries-active-mem-table") == 0)
      h.put(bytes("m"), bytes("in the memtable"))
      h.delete(bytes("z"))
      rows.filterNot(_._1.sameElements(bytes("z"))).foreach { case (k, v) => assert(h.get(k).toSeq == v.toSeq) }
      assert(h.get(bytes("m")).toSeq == bytes("in the memtable").toSeq)
      (bytes("z") +: missing).foreach(k => assert(h.get(k) == null))
    }
  }

  test("legacy rows are read through it too") {
    withHandle { h =>
      val batch = h.newLegacyBatch()
      try { batch.put(bytes("old"), bytes("plain")); batch.flushTo() }
      finally batch.close()
      assert(h.getLegacy(bytes("old")).toSeq == bytes("plain").toSeq)
      assert(h.getLegacy(bytes("new")) == null)
      assert(h.get(bytes("old")) == null) // the timestamped family does not hold it
    }
  }
}
