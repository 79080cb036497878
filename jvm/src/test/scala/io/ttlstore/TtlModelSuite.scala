package io.ttlstore

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlHarness._
import io.ttlstore.TtlStoreConfig._

/**
 * Random puts, reads, removes, clock moves and restarts, checked step by step against a plain model
 * of the rule: a row last written (or renewed) at `ts` is gone once `ts + ttl <= now`.
 */
class TtlModelSuite extends AnyFunSuite {
  private val ttlMs = 10L

  for {
    update <- UpdateType.all
    visibility <- StateVisibility.all
    seed <- 1 to 2
  } test(s"the store agrees with the model (${update.name}, ${visibility.name}, seed $seed)") {
    val r = new Random(seed * 31 + update.name.length * 7 + visibility.name.length)
    val returnsExpired = visibility == StateVisibility.ReturnExpiredIfNotCleanedUp
    withHarness(ttl(ttlMs, UpdateTypeKey -> update.name, StateVisibilityKey -> visibility.name)) { h =>
      var model = Map.empty[String, (Long, Long)] // key -> (value, timestamp)
      var now = 0L
      def expired(ts: Long) = ExpiryRule.isExpired(ts, ttlMs, now)

      (1 to 80).foreach { step =>
        now += r.nextInt(6)
        h.clock.set(now)
        if (r.nextInt(10) == 0) h.restart()
        val store = h.current.getStore(h.version)
        (1 to 1 + r.nextInt(4)).foreach { _ =>
          val k = s"k${r.nextInt(8)}"
          r.nextInt(3) match {
            case 0 =>
              val v = r.nextInt(1000).toLong
              store.put(key(k), value(v))
              model += k -> (v, now)
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
        model = model.filter { case (_, (_, ts)) => !expired(ts) } // the commit's sweep
        assert(store.metrics.numKeys == model.size, s"rows after step $step")
        assert(h.visible == model.map { case (k, (v, _)) => k -> v }, s"visible rows after step $step")
      }
    }
  }
}
