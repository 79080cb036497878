package io.ttlstore

import java.io.{File, RandomAccessFile}
import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.errors.TtlStoreException

/**
 * `lazyLoad.enabled` (issue 51): a store that loads a snapshot without a local copy opens while its SST files are
 * still in the checkpoint, reads them there, and brings them down meanwhile; what the checkpoint cannot serve fails
 * by name, the checkpoint's file named.
 */
class LazyLoadSuite extends AnyFunSuite {
  private val Keys = 4000

  /** A provider of the store in `checkpoint` (through `hooked://`), working in `localDir`. */
  private def provider(checkpoint: File, localDir: File, settings: (String, String)*): TtlStateStoreProvider =
    newProvider(TtlProvider, checkpoint, storeConf(settings :+ (TtlStoreConfig.LocalDir.key -> localDir.getPath): _*),
      location = Some(HookedFileSystem.location(checkpoint)), hadoop = HookedFileSystem.conf)
      .asInstanceOf[TtlStateStoreProvider]

  /** Versions 1 to 4, each writing every key, with the snapshot of version 3 uploaded; version 4's rows. */
  private def written(checkpoint: File): Map[(String, Int), Long] = withTempDir { local =>
    withProvider(provider(checkpoint, local)) { p =>
      (0 until 4).foreach { v =>
        val store = p.getStore(v.toLong)
        (0 until Keys).foreach(i => store.put(key(s"user$i"), value(v * 10000L + i)))
        store.commit()
        if (v + 1 == 3) p.doMaintenance()
      }
    }
    (0 until Keys).map(i => ("user" + i, 0) -> (30000L + i)).toMap
  }

  private def checkpointSsts(checkpoint: File): Seq[File] =
    Option(new File(checkpoint, "0/0/ttlstore/sst").listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst"))

  private def localSsts(localDir: File): Seq[String] =
    Files.walk(localDir.toPath).toArray.map(_.asInstanceOf[java.nio.file.Path])
      .filter(p => p.getFileName.toString.endsWith(".sst") && p.getParent.getFileName.toString == "db")
      .map(_.getFileName.toString).toSeq

  /** Runs `body` with every download of an SST file held until `release` opens. */
  private def downloadsHeld[T](release: CountDownLatch)(body: => T): T =
    HookedFileSystem.whileOpening { (f: Path) =>
      if (f.getName.endsWith(".sst") && Thread.currentThread().getName.startsWith("ttlstore-download")) release.await()
    }(body)

  private def within[T](what: String)(body: => T): T =
    try Await.result(Future(body)(ExecutionContext.global), 60.seconds)
    catch { case _: java.util.concurrent.TimeoutException => fail(s"$what did not return within 60 s") }

  test("a store opens, reads and commits while none of its SST files has come down, then brings them all down") {
    withTempDir { checkpoint =>
      val expected = written(checkpoint)
      assert(checkpointSsts(checkpoint).nonEmpty)
      withTempDir { local =>
        val release = new CountDownLatch(1)
        withProvider(provider(checkpoint, local, TtlStoreConfig.LazyLoadEnabled.key -> "true")) { p =>
          try downloadsHeld(release) {
              within("a load whose downloads are held") {
                val store = p.getStore(4)
                assert(contents(store) == expected)
                assert(localSsts(local).isEmpty, "no SST file came down: every row was read from the checkpoint")
                store.put(key("new"), value(1))
                store.commit()
                val figures = store.metrics.customMetrics.map { case (m, n) => m.name -> n }
                assert(figures("ttlstoreLoadCheckpointReads") >= checkpointSsts(checkpoint).size,
                  "the open read each file")
              }
            }
          finally release.countDown()
          val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
          // At least one commit after the release, however soon the files are all down. Once they are, a commit
          // due for a snapshot flushes files of its own beside them.
          val snapshotFiles = checkpointSsts(checkpoint).map(_.getName.takeWhile(_ != '-') + ".sst").toSet
          var version = commitVersion(p, 5L, ("tick", 0) -> Some(5L))
          while (!snapshotFiles.subsetOf(localSsts(local).toSet) && System.nanoTime() < deadline) {
            version = commitVersion(p, version, ("tick", 0) -> Some(version))
          }
          assert(snapshotFiles.subsetOf(localSsts(local).toSet),
            s"local: ${localSsts(local)}, snapshot: $snapshotFiles")
          assert(read(p, version) == expected + (("new", 0) -> 1L) + (("tick", 0) -> (version - 1)))
        }
      }
    }
  }

  test(
    "a snapshot Spark asks for while the SST files come down makes no commit wait: the first commit after takes it") {
    withTempDir { checkpoint =>
      val expected = written(checkpoint)
      def snapshots = Option(new File(checkpoint, "0/0/ttlstore").list()).toSeq.flatten
        .filter(_.endsWith(".snapshot")).map(_.takeWhile(_ != '.').toLong).toSet
      withTempDir { local =>
        val release = new CountDownLatch(1)
        withProvider(provider(checkpoint, local, TtlStoreConfig.LazyLoadEnabled.key -> "true")) { p =>
          try downloadsHeld(release) {
              within("a commit Spark asked to snapshot, its downloads held") {
                val store = p.getStore(4, None, forceSnapshotOnCommit = true, loadEmpty = false)
                store.put(key("new"), value(1))
                store.commit()
              }
            }
          finally release.countDown()
          p.doMaintenance()
          assert(!snapshots.contains(5), "no snapshot of the version committed before the files were local")
          val snapshotFiles = checkpointSsts(checkpoint).map(_.getName.takeWhile(_ != '-') + ".sst").toSet
          val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
          while (!snapshotFiles.subsetOf(localSsts(local).toSet) && System.nanoTime() < deadline) Thread.sleep(50)
          val next = p.getStore(5, None, forceSnapshotOnCommit = true, loadEmpty = false)
          next.put(key("later"), value(2))
          next.commit()
          p.doMaintenance()
          assert(snapshots.contains(6), s"the snapshot Spark asked again for, once the files are local: $snapshots")
          assert(read(p, 6) == expected + (("new", 0) -> 1L) + (("later", 0) -> 2L))
        }
      }
    }
  }

  test("a damaged SST file in the checkpoint fails the lazily loading store naming that file") {
    withTempDir { checkpoint =>
      written(checkpoint)
      val damaged = checkpointSsts(checkpoint).maxBy(_.length())
      val f = new RandomAccessFile(damaged, "rw")
      try { f.seek(damaged.length() / 3); val b = f.read(); f.seek(damaged.length() / 3); f.write(b ^ 0xff) }
      finally f.close()
      withTempDir { local =>
        withProvider(provider(checkpoint, local, TtlStoreConfig.LazyLoadEnabled.key -> "true")) { p =>
          val e = intercept[TtlStoreException] {
            val store = p.getStore(4)
            contents(store)
            store.commit()
            (5 to 200).foreach(v => commitVersion(p, v - 1L, ("tick", 0) -> Some(v.toLong)))
          }
          assert(e.errorName == "SST_CORRUPTED", e.getMessage)
          assert(e.getMessage.contains(damaged.getName), e.getMessage)
        }
      }
    }
  }

  test("a checkpoint that stops answering a read fails the load within lazyLoad.readTimeout, naming the file") {
    withTempDir { checkpoint =>
      written(checkpoint)
      withTempDir { local =>
        val release = new CountDownLatch(1)
        withProvider(provider(checkpoint, local, TtlStoreConfig.LazyLoadEnabled.key -> "true",
            TtlStoreConfig.LazyReadTimeout.key -> "2s")) { p =>
          // Ranged reads get no answer; downloads take longer than the bound, and end (the store's close waits for them).
          val stalled = (f: Path) =>
            if (f.getName.endsWith(".sst")) {
              if (Thread.currentThread().getName.startsWith("ttlstore-download")) Thread.sleep(5000)
              else release.await()
            }
          try HookedFileSystem.whileOpening(stalled) {
              val e = within("a load whose reads get no answer")(intercept[TtlStoreException](p.getStore(4)))
              assert(e.errorName == "CHECKPOINT_READ_FAILED", e.getMessage)
              assert(checkpointSsts(checkpoint).exists(f => e.getMessage.contains(f.getName)), e.getMessage)
              assert(e.getMessage.contains("no answer from the checkpoint's file system within 2000 ms"), e.getMessage)
            }
          finally release.countDown()
        }
      }
    }
  }

  test("a download that finds the local disk full fails the store as LOCAL_DISK_FULL, as a load that fetches first") {
    val full = new File("/dev/full")
    assume(full.exists, "this system has no /dev/full")
    withTempDir { checkpoint =>
      written(checkpoint)
      withTempDir { local =>
        withProvider(provider(checkpoint, local, TtlStoreConfig.LazyLoadEnabled.key -> "true")) { p =>
          // Each download fails as a write the operating system refuses for want of space.
          val noSpace = (f: Path) =>
            if (f.getName.endsWith(".sst") && Thread.currentThread().getName.startsWith("ttlstore-download")) {
              val out = new java.io.FileOutputStream(full)
              try { out.write(new Array[Byte](4096)); out.flush() }
              finally out.close()
            }
          val e = HookedFileSystem.whileOpening(noSpace) {
            within("a load whose downloads find the disk full") {
              intercept[TtlStoreException] {
                val store = p.getStore(4)
                contents(store)
                store.commit()
                (5 to 200).foreach(v => commitVersion(p, v - 1L, ("tick", 0) -> Some(v.toLong)))
              }
            }
          }
          assert(e.errorName == "LOCAL_DISK_FULL", e.getMessage)
          assert(e.getMessage.contains("download the snapshot of version 3"), e.getMessage)
        }
      }
    }
  }
}
