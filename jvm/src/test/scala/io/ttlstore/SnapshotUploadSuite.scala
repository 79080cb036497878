package io.ttlstore

import java.io.File
import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures.withTempDir
import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotUploader, StoreLock, VersionFile}

/**
 * Snapshot uploads beside cleanup. The race itself is proven from outside by the format v2
 * retention test in tests/test_checkpoint_v2.py, where each batch is a new query run and an old
 * run's instance uploads its last snapshot while the next run's instance cleans up.
 */
class SnapshotUploadSuite extends AnyFunSuite {

  /** A local RocksDB checkpoint as the uploader sees it: SSTs and the small files. */
  private def localCheckpoint(parent: File, name: String, ssts: (String, Int)*): File = {
    val dir = new File(parent, name)
    dir.mkdirs()
    ssts.foreach { case (n, size) => Files.write(new File(dir, n).toPath, Array.fill[Byte](size)(n.head.toByte)) }
    Files.writeString(new File(dir, "CURRENT").toPath, "MANIFEST-000001\n")
    Files.writeString(new File(dir, "MANIFEST-000001").toPath, name)
    dir
  }

  /** A store's checkpoint files in a fresh directory, and an uploader of snapshots into them. */
  private def withStore(body: (File, CheckpointFiles, SnapshotUploader) => Unit): Unit =
    withTempDir { dir =>
      val files = new CheckpointFiles(new Path(new File(dir, "store").toURI), new Configuration())
      body(dir, files, new SnapshotUploader(files))
    }

  test("a snapshot reusing an SST that another instance's cleanup deleted copies it again and loads") {
    withStore { (dir, files, uploader) =>
      uploader.offer(VersionFile(2, None), 10, None, localCheckpoint(dir, "v2", "000008.sst" -> 300))
      uploader.uploadPending()
      val shared = files.readManifest(VersionFile(2, None)).sstFiles.map(_.dfsName)
      // Version 2's snapshot is retired by a newer query run's instance, which cleans up its SST.
      shared.foreach(n => files.delete(files.sstPath(n)))

      uploader.offer(VersionFile(4, None), 20, None,
        localCheckpoint(dir, "v4", "000008.sst" -> 300, "000012.sst" -> 50))
      uploader.uploadPending()

      val restored = new File(dir, "restored")
      restored.mkdirs()
      val (manifest, _) = files.downloadSnapshot(VersionFile(4, None), restored, threads = 4)
      assert(manifest.sstFiles.map(_.localName) == Seq("000008.sst", "000012.sst"))
      assert(new File(restored, "000008.sst").length() == 300)
      val names = files.sstFiles().map(_.getPath.getName).toSet
      assert(manifest.sstFiles.forall(s => names(s.dfsName)))
    }
  }

  test("an SST that is still there is reused, not uploaded again") {
    withStore { (dir, files, uploader) =>
      uploader.offer(VersionFile(2, None), 10, None, localCheckpoint(dir, "v2", "000008.sst" -> 100000))
      uploader.uploadPending()
      uploader.offer(VersionFile(4, None), 20, None,
        localCheckpoint(dir, "v4", "000008.sst" -> 100000, "000012.sst" -> 50))
      val upload = uploader.uploadPending().get
      assert(files.readManifest(VersionFile(4, None)).sstFiles.head == files.readManifest(VersionFile(2, None)).sstFiles
        .head)
      assert(files.sstFiles().size == 2)
      assert(upload.bytes < 10000, s"uploaded ${upload.bytes} bytes: the reused SST again")
    }
  }

  test("work on one store's files waits for the holder of its lock; another store's does not") {
    val a = new Path("file:/checkpoint/state/0/0/ttlstore")
    val b = new Path("file:/checkpoint/state/0/1/ttlstore")
    val holding = new CountDownLatch(1)
    val release = new CountDownLatch(1)
    val holder = new Thread(() => StoreLock.exclusively(a) { holding.countDown(); release.await() })
    holder.start()
    assert(holding.await(10, TimeUnit.SECONDS))
    val entered = new AtomicBoolean(false)
    val waiter = new Thread(() => StoreLock.exclusively(a)(entered.set(true)))
    waiter.start()
    assert(StoreLock.exclusively(b)(true), "another store's lock is free")
    waiter.join(300)
    assert(!entered.get(), "the same store's lock is held")
    release.countDown()
    waiter.join(10000)
    holder.join(10000)
    assert(entered.get())
    assert(!StoreLock.alive(a) && !StoreLock.alive(b), "no lock outlives its holders")
  }
}
