package io.ttlstore.bench

import java.nio.file.{Files, Paths}

import scala.util.Random

import org.apache.commons.io.FileUtils

import io.ttlstore.StoreFixtures
import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig

/**
 * `make bench` (store level): what TTL costs when nothing expires, measured on the provider alone,
 * without Spark's scheduling around it. Each round opens a fresh store, with TTL off or with a
 * 1-day TTL, and runs versions of aggregation's pattern (a read store's `get`, then the write
 * store's `put`) and deduplication's (`keyExists`, then `put` of new keys). After a discarded
 * warm-up pair (JIT), rounds alternate off/on; the figure is the median of the paired ratios.
 * Writes JSON to the path given; further arguments `key=value` are set on both sides (for
 * experiments, such as `spark.sql.streaming.stateStore.ttlstore.nativeFilter.enabled=false`).
 */
object TtlOverheadBench {
  private val Versions = 8
  private val OpsPerVersion = 100000
  private val KeySpace = 300000

  private var extra: Seq[(String, String)] = Nil

  def main(args: Array[String]): Unit = {
    extra = args.drop(1).toSeq.map { a =>
      val i = a.indexOf('='); a.take(i) -> a.drop(i + 1)
    }
    val rounds = 7
    Seq("aggregation", "dropDuplicates").foreach { p => run(p, ttl = false); run(p, ttl = true) }
    val results = for {
      pattern <- Seq("aggregation", "dropDuplicates")
      _ <- 1 to rounds
      ttl <- Seq(false, true)
    } yield (pattern, ttl, run(pattern, ttl))
    val byPattern = results.groupBy(_._1).map { case (pattern, rs) =>
      val off = rs.filter(!_._2).map(_._3)
      val on = rs.filter(_._2).map(_._3)
      val ratios = off.zip(on).map { case (o, n) => n / o }.sorted
      pattern -> (ratios(ratios.size / 2), off, on)
    }
    val json = byPattern.map { case (p, (median, off, on)) =>
      s""""$p": {"median_ratio": $median, "off_ops_per_s": [${off.mkString(", ")}], "on_ops_per_s": [${on.mkString(
          ", ")}]}"""
    }.mkString("{\n  ", ",\n  ", "\n}\n")
    Files.write(Paths.get(args.headOption.getOrElse("bench-output/ttl-overhead.json")), json.getBytes("UTF-8"))
    byPattern.foreach { case (p, (median, _, _)) => println(f"$p%-15s TTL on / off: $median%.3fx") }
  }

  /** Operations per second of one round. */
  private def run(pattern: String, ttl: Boolean): Double = {
    val dir = Files.createTempDirectory("ttlstore-overhead").toFile
    try {
      val conf = storeConf((if (ttl) Seq(TtlStoreConfig.Ttl.key -> "1 day") else Nil) ++ extra: _*)
      withProvider(newProvider(TtlProvider, dir, conf)) { p =>
        val r = new Random(42)
        var next = 0
        val start = System.nanoTime()
        (0 until Versions).foreach { v =>
          val read = p.getReadStore(v)
          val store = p.upgradeReadStoreToWriteStore(read, v)
          (0 until OpsPerVersion).foreach { _ =>
            if (pattern == "aggregation") {
              val k = key(s"k${r.nextInt(KeySpace)}")
              val old = read.get(k)
              store.put(k, value(if (old == null) 1L else StoreFixtures.countOf(old) + 1))
            } else {
              val k = key(s"k$next"); next += 1
              if (!store.keyExists(k)) store.put(k, value(1L))
            }
          }
          store.commit()
        }
        Versions.toLong * OpsPerVersion / ((System.nanoTime() - start) / 1e9)
      }
    } finally FileUtils.deleteQuietly(dir)
  }
}
