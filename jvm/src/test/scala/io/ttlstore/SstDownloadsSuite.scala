package io.ttlstore

import java.io.{File, IOException}
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import io.ttlstore.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures.withTempDir
import io.ttlstore.checkpoint.SstDownloads
import io.ttlstore.checkpoint.SstDownloads.Download

/** How a snapshot's files are fetched: several at once, within one bound, and never half in place. */
class SstDownloadsSuite extends AnyFunSuite {

  /** A download that writes `bytes` bytes, counting how many downloads run at the same time. */
  private def counted(
      dir: File, name: String, running: AtomicInteger, peak: AtomicInteger, bytes: Int = 1024): Download =
    Download(new File(dir, name),
      out => {
        val now = running.incrementAndGet()
        peak.accumulateAndGet(now, math.max)
        try {
          Thread.sleep(20)
          out.write(Array.fill[Byte](bytes)(1))
        } finally running.decrementAndGet()
      })

  test("files download several at once, never more than the bound, and each lands under its own name") {
    withTempDir { dir =>
      val (running, peak) = (new AtomicInteger, new AtomicInteger)
      // Every download waits until four run together: fewer threads than the bound would never get there.
      val together = new CountDownLatch(4)
      val downloads = (1 to 24).map { i =>
        val d = counted(dir, s"$i.sst", running, peak)
        Download(d.target,
          out => {
            together.countDown()
            assert(together.await(30, TimeUnit.SECONDS), "four downloads never ran at once")
            d.fetch(out)
          })
      }
      SstDownloads.run(downloads, threads = 4)
      assert(peak.get <= 4, "never more than the bound")
      assert(dir.listFiles().map(_.getName).toSet == (1 to 24).map(i => s"$i.sst").toSet)
      assert(dir.listFiles().forall(_.length() == 1024))
    }
  }

  test("loads running at the same time share the one bound of the executor") {
    withTempDir { dir =>
      val (running, peak) = (new AtomicInteger, new AtomicInteger)
      val loads = (1 to 3).map { load =>
        val sub = new File(dir, s"store-$load")
        sub.mkdirs()
        new Thread(() => SstDownloads.run((1 to 8).map(i => counted(sub, s"$i.sst", running, peak)), threads = 2))
      }
      loads.foreach(_.start())
      loads.foreach(_.join())
      assert(peak.get <= 2)
      assert(dir.listFiles().forall(_.listFiles().length == 8))
    }
  }

  test("a download a load waits for starts before the background downloads queued ahead of it") {
    withTempDir { dir =>
      val release = new CountDownLatch(1)
      val started = new ConcurrentLinkedQueue[String]()
      def held(name: String, urgency: String): Download = Download(new File(dir, name),
        out => {
          started.add(s"$urgency $name")
          assert(release.await(30, TimeUnit.SECONDS))
          out.write(Array[Byte](1))
        })
      // Two slots, both taken by a store's background files, six more of them queued.
      val background = SstDownloads.start((1 to 8).map(i => held(s"$i.sst", "background")), threads = 2,
        SstDownloads.Background)
      while (started.size < 2) Thread.sleep(5)
      val waited = SstDownloads.start(Seq(held("changelog", "waited")), threads = 2)
      while (started.size < 3) Thread.sleep(5)
      release.countDown()
      waited.await()
      background.await()
      assert(started.asScala.toSeq.take(3).last == "waited changelog",
        s"the waited download ran third, not behind the queued ones: ${started.asScala.toSeq}")
      assert(dir.listFiles().length == 9)
    }
  }

  test("a background download closed before it started never runs") {
    withTempDir { dir =>
      val (release, started) = (new CountDownLatch(1), new AtomicInteger)
      val downloads = (1 to 6).map { i =>
        Download(new File(dir, s"$i.sst"),
          out => {
            started.incrementAndGet()
            assert(release.await(30, TimeUnit.SECONDS))
            out.write(Array[Byte](1))
          })
      }
      val pending = SstDownloads.start(downloads, threads = 1, SstDownloads.Background)
      while (started.get < 1) Thread.sleep(5)
      val cancelled = new Thread(() => pending.cancel())
      cancelled.start()
      Thread.sleep(50)
      release.countDown()
      cancelled.join(30000)
      assert(!cancelled.isAlive && pending.isDone)
      assert(started.get == 1, "the queued downloads were dropped, not run")
    }
  }

  test("a download that fails leaves no file behind, stops the ones not started, and is thrown as it failed") {
    withTempDir { dir =>
      val started = new ConcurrentLinkedQueue[String]()
      val failing = Download(new File(dir, "bad.sst"),
        out => {
          started.add("bad.sst")
          out.write(Array.fill[Byte](100)(1))
          throw new IOException("connection reset after 100 bytes")
        })
      val others = (1 to 20).map { i =>
        Download(new File(dir, s"$i.sst"),
          out => {
            started.add(s"$i.sst")
            Thread.sleep(50)
            out.write(Array.fill[Byte](10)(1))
          })
      }
      val e = intercept[IOException](SstDownloads.run(failing +: others, threads = 2))
      assert(e.getMessage == "connection reset after 100 bytes")
      assert(!new File(dir, "bad.sst").exists(), "a failed download is never in place")
      assert(dir.listFiles().forall(f => !f.getName.startsWith(".") && f.length() == 10),
        s"no temporary or partial file: ${dir.listFiles().map(_.getName).toSeq}")
      // The gate lets downloads in as they came to it, the failing one among the first the pool's threads took.
      assert(started.asScala.size < 21, "the downloads not started when it failed never ran")
    }
  }

  test("the caller returns only once the downloads under way have stopped") {
    withTempDir { dir =>
      val (slowStarted, slowDone) = (new CountDownLatch(1), new CountDownLatch(1))
      val slow = Download(new File(dir, "slow.sst"),
        out => {
          slowStarted.countDown()
          Thread.sleep(300)
          out.write(Array[Byte](1))
          slowDone.countDown()
        })
      // It fails once the slow one is under way (a download not started when one fails never starts).
      val failing = Download(new File(dir, "bad.sst"),
        _ => {
          assert(slowStarted.await(30, TimeUnit.SECONDS))
          throw new IOException("gone")
        })
      intercept[IOException](SstDownloads.run(Seq(failing, slow), threads = 2))
      assert(slowDone.await(0, TimeUnit.MILLISECONDS), "nothing writes into the directory after the call")
    }
  }
}
