package io.ttlstore

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.TtlRecord
import io.ttlstore.ttl.{ExpiryRule, TimestampHistogram, TtlPolicy}

class TimestampHistogramSuite extends AnyFunSuite {

  test("counts rows by timestamp and forgets removed ones") {
    val h = TimestampHistogram.empty()
    Seq(10L, 10L, 20L).foreach(h.add)
    h.remove(10L)
    assert(h.total == 2 && h.entries == Seq(10L -> 1L, 20L -> 1L) && h.oldest.contains(10L))
  }

  test(
    "updates that move rows between buckets keep exact counts, also when a bucket empties, expires and fills again") {
    val r = new Random(11)
    val h = TimestampHistogram.empty()
    val model = scala.collection.mutable.Map.empty[Long, Long].withDefaultValue(0L)
    var expiredBelow = Long.MinValue
    (1 to 20000).foreach { step =>
      val live = model.filter(_._2 > 0).keys.toSeq
      if (step % 500 == 0) {
        // Every row stamped at least `ttl` before now leaves at once, as a commit with the native filter does.
        val now = live.sorted.lift(live.size / 2).getOrElse(0L) + 10
        h.dropExpired(ttlMs = 10, now = now)
        model.keys.filter(ts => ExpiryRule.isExpired(ts, 10, now)).foreach(model.remove)
        expiredBelow = expiredBelow.max(now - 10)
      } else if (r.nextInt(10) < 4 && live.nonEmpty) {
        val ts = live(r.nextInt(live.size))
        h.remove(ts)
        model(ts) -= 1
      } else {
        val ts = (expiredBelow + 1).max(0L) + r.nextInt(6) + step / 2000
        h.add(ts)
        model(ts) += 1
      }
      assert(h.entries == model.filter(_._2 > 0).toSeq.sorted, s"after step $step")
    }
    assert(h.total == model.values.sum)
  }

  test("knows whether any row may be expired, and how many certainly are") {
    val h = TimestampHistogram.empty()
    Seq(100L, 100L, 200L).foreach(h.add)
    assert(!h.mayHaveExpired(ttlMs = 50, now = 149))
    assert(h.mayHaveExpired(ttlMs = 50, now = 150))
    assert(h.certainlyExpired(ttlMs = 50, now = 150) == 2)
    assert(h.certainlyExpired(ttlMs = 50, now = 250) == 3)
    assert(h.certainlyExpired(ttlMs = 0, now = 250) == 0)
  }

  test("more distinct timestamps than buckets coarsen it, keeping totals and lower bounds") {
    val r = new Random(3)
    val h = TimestampHistogram.empty()
    val stamps = Seq.fill(5000)(r.nextInt(100000).toLong - 50000)
    stamps.foreach(h.add)
    assert(h.entries.size <= TimestampHistogram.MaxBuckets && h.granularityMs > 1)
    assert(h.total == 5000 && h.oldest.get <= stamps.min)
    (1 to 50).foreach { _ =>
      val now = r.nextInt(200000).toLong - 50000
      val exact = stamps.count(ts => ExpiryRule.isExpired(ts, 1000, now))
      assert(h.certainlyExpired(1000, now) <= exact)
    }
    stamps.foreach(h.remove)
    assert(h.isEmpty && h.entries.isEmpty)
  }

  test("a recorded histogram rebuilds to the same counts") {
    val h = TimestampHistogram.empty()
    Seq(5L, 7L, 7L).foreach(h.add)
    val back = TtlRecord.fromJson(TtlRecord(TtlPolicy.Off, Some(9L), h, Some(3L), Some(11L), Some(5L), Some(8L)).toJson)
    assert(back.timestamps.entries == h.entries && back.streamTimeMs.contains(9L) && back.countedFromMs.contains(
      3L) && back.nowMs.contains(11L) && back.legacyRows.contains(5L) && back.watermarkMs.contains(8L))
    // A record written before watermarks were recorded reads with none.
    assert(TtlRecord.fromJson(back.toJson.replace(",\"watermarkMs\":8", "")).watermarkMs.isEmpty)
  }
}
