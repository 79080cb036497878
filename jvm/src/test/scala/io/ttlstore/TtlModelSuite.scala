package io.ttlstore

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlHarness._
import io.ttlstore.config.TtlStoreConfig._
import io.ttlstore.ttl.{ExpiryRule, StateVisibility, TimeCharacteristic, UpdateType}

/**
 * Random puts, reads, removes, clock moves and restarts, checked step by step against a plain model
 * of the rule: a row last written (or renewed) at `ts` is gone once `ts + ttl <= now`. In processing
 * time `now` is the clock; in event time a row's value is its event time (sometimes late) and `now`
 * is the largest event time committed before the step. With the native filter on, compactions run
 * at random steps: the filter may drop only rows the model already considers gone. (With
 * ReturnExpiredIfNotCleanedUp the filter decides what is "cleaned up", so the model runs those with
 * the JVM sweep, whose timing it knows.)
 */
class TtlModelSuite extends AnyFunSuite {
  private val ttlMs = 10L

  for {
    time <- TimeCharacteristic.all
    update <- UpdateType.all
    visibility <- StateVisibility.all
    filter <- if (visibility == StateVisibility.NeverReturnExpired) Seq(true, false) else Seq(false)
    seed <- 1 to (if (time == TimeCharacteristic.ProcessingTime) 2 else 1)
  } test(s"the store agrees with the model (${time.name}, ${update.name}, ${visibility.name}, " +
    s"${if (filter) "native filter" else "JVM sweep"}, seed $seed)") {
    val r = new Random(seed * 31 + update.name.length * 7 + visibility.name.length + time.name.length)
    val returnsExpired = visibility == StateVisibility.ReturnExpiredIfNotCleanedUp
    val eventTime = time == TimeCharacteristic.EventTime
    val timeSettings = if (eventTime) Seq(TimeCharacteristicKey -> time.name, EventTimeColumnKey -> "count") else Nil
    withHarness(ttl(ttlMs,
        (Seq(UpdateTypeKey -> update.name, StateVisibilityKey -> visibility.name,
          NativeFilterEnabled -> (if (filter) "true" else "false")) ++ timeSettings): _*)) { h =>
      var model = Map.empty[String, (Long, Long)] // key -> (value, timestamp)
      var now = if (eventTime) Long.MinValue else 0L
      var clock = 0L
      var streamTime = Long.MinValue
      def expired(ts: Long) = ExpiryRule.isExpired(ts, ttlMs, now)

      (1 to 80).foreach { step =>
        clock += r.nextInt(6)
        h.clock.set(clock)
        now = if (eventTime) streamTime else clock
        if (r.nextInt(10) == 0) h.restart()
        val store = h.current.getStore(h.version)
        if (filter && r.nextInt(4) == 0) h.current.localStore.db.compactNow()
        (1 to 1 + r.nextInt(4)).foreach { _ =>
          val k = s"k${r.nextInt(8)}"
          r.nextInt(3) match {
            case 0 =>
              // In event time the value is the row's event time: around the clock, sometimes late.
              val v = if (eventTime) clock - r.nextInt(15) else r.nextInt(1000).toLong
              store.put(key(k), value(v))
              model += k -> (v, if (eventTime) v else now)
              if (eventTime) streamTime = math.max(streamTime, v)
            case 1 =>
              val expected = model.get(k) match {
                case Some((v, ts)) if expired(ts) =>
                  if (returnsExpired) Some(v) else { model -= k; None }
                case Some((v, ts)) =>
                  if (update == UpdateType.OnReadAndWrite) model += k -> (v, math.max(ts, now))
                  Some(v)
                case None => None
              }
              assert(Option(store.get(key(k))).map(countOf) == expected, s"get $k at step $step, now $now")
            case _ =>
              store.remove(key(k))
              model -= k
          }
        }
        h.version = store.commit()
        model = model.filter { case (_, (_, ts)) => !expired(ts) } // the sweep, or the uncounting
        assert(store.metrics.numKeys == model.size, s"rows after step $step")
        assert(h.current.localStore.timestamps.total == model.size, s"histogram total after step $step")
        // A read store of the next version judges with its own now: in event time, the new stream time.
        now = if (eventTime) streamTime else clock
        val shown = if (returnsExpired) model else model.filter { case (_, (_, ts)) => !expired(ts) }
        assert(h.visible == shown.map { case (k, (v, _)) => k -> v }, s"visible rows after step $step")
      }
    }
  }
}
