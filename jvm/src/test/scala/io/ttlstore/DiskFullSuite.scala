package io.ttlstore

import java.io.{File, FileOutputStream, IOException}

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.errors.{DiskFull, TtlStoreErrors}
import io.ttlstore.store.rocksdb.{LocalDiskFull, LocalWorkDirs}

/**
 * Telling a full disk from other failures. A real ENOSPC comes from Linux's /dev/full, which fails
 * every write as a full disk does; the query-level proof (a real tmpfs filling under a running
 * query) is tests/test_disk_full.py.
 */
class DiskFullSuite extends AnyFunSuite {

  private def enospc(): IOException = {
    val full = new File("/dev/full")
    assume(full.exists, "this system has no /dev/full")
    val out = new FileOutputStream(full)
    try intercept[IOException] { out.write(new Array[Byte](4096)); out.flush() }
    finally out.close()
  }

  test("a write the operating system refuses for want of space is a full disk, wrapped or not") {
    val e = enospc()
    assert(DiskFull.in(e))
    assert(DiskFull.in(new RuntimeException("the download failed", e)))
  }

  test("a damaged file or a missing one is not a full disk") {
    assert(!DiskFull.in(TtlStoreErrors.changelogCorrupted("/c/3.changelog", 3, "checksum mismatch")))
    assert(!DiskFull.in(new java.io.FileNotFoundException("/c/3.changelog (No such file or directory)")))
  }

  test("the error names the local directory of the working copies, the space left there and the setting") {
    withTempDir { root =>
      val copy = LocalWorkDirs.create(root)
      val db = new File(copy, "db")
      val error = intercept[Exception](LocalDiskFull.named("store 0", db, "put a key")(throw enospc()))
      val named = error.asInstanceOf[io.ttlstore.errors.TtlStoreException]
      assert(named.errorName == "LOCAL_DISK_FULL")
      assert(named.getSqlState == "53100")
      assert(named.getMessage.contains(s"The local disk of ${root.getAbsolutePath} is full ("))
      assert(named.getMessage.contains("MiB free of"))
      assert(named.getMessage.contains(s"in its working copy ${copy.getAbsolutePath}"))
      assert(named.getMessage.contains("spark.sql.streaming.stateStore.ttlstore.localDir"))
      val again = intercept[Exception](LocalDiskFull.named[Unit]("store 0", db, "again")(throw named))
      assert(again eq named, "named once, not twice")
      LocalWorkDirs.release(copy)
    }
  }
}
