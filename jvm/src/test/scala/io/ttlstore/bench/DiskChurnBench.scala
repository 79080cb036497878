package io.ttlstore.bench

import java.nio.file.{Files, Paths}

import org.apache.commons.io.FileUtils

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlStateStoreProvider
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.ttl.ManualClock

/**
 * `make bench` (store level): the local disk a store with TTL occupies under churn, against the
 * live data in it. Every version writes `PerVersion` new keys one time unit later; the TTL is
 * `TtlVersions` units, so about `TtlVersions * PerVersion` rows are alive at any time. Maintenance
 * runs after every commit (as Spark's would between batches). After each version the bench reads
 * the store's live SST bytes (RocksDB's files; the memtable is not on disk).
 *
 * The live data is measured, not estimated: at the end the filter run's store is compacted in full
 * at the last version's time, which leaves exactly the live rows in SST files. Steady state is the
 * median of the last two thirds of the versions. Writes JSON to the path given.
 */
object DiskChurnBench {
  private val Versions = 60
  private val PerVersion = 50000
  private val TtlVersions = 8L

  final case class Run(sstSeries: Seq[Long], liveRows: Long, compactedBytes: Long) {
    def steady: Long = {
      val tail = sstSeries.drop(sstSeries.size / 3).sorted
      tail(tail.size / 2)
    }
  }

  def main(args: Array[String]): Unit = {
    val filter = run(filter = true)
    val sweep = run(filter = false)
    val live = filter.compactedBytes.toDouble
    val json =
      s"""{
         |  "versions": $Versions, "rows_per_version": $PerVersion, "ttl_versions": $TtlVersions,
         |  "live_rows": ${filter.liveRows}, "live_bytes": ${filter.compactedBytes},
         |  "filter": {"steady_sst_bytes": ${filter.steady}, "vs_live": ${filter.steady / live}, "sst_series": [${filter
          .sstSeries.mkString(", ")}]},
         |  "sweep": {"steady_sst_bytes": ${sweep.steady}, "vs_live": ${sweep.steady / live}, "sst_series": [${sweep
          .sstSeries.mkString(", ")}]}
         |}
         |""".stripMargin
    Files.write(Paths.get(args.headOption.getOrElse("bench-output/disk-churn.json")), json.getBytes("UTF-8"))
    println(
      f"steady local SST bytes / live data: filter ${filter.steady / live}%.2fx, sweep ${sweep.steady / live}%.2fx")
  }

  private def run(filter: Boolean): Run = {
    val dir = Files.createTempDirectory("ttlstore-disk-churn").toFile
    try {
      val conf = storeConf(TtlStoreConfig.Ttl.key -> TtlVersions.toString,
        TtlStoreConfig.NativeFilterEnabled.key -> filter.toString,
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "10")
      val clock = new ManualClock(0L)
      withProvider(newProvider(TtlProvider, dir, conf, clock = Some(clock)).asInstanceOf[TtlStateStoreProvider]) { p =>
        var version = 0L
        val series = (0 until Versions).map { v =>
          clock.set(v.toLong)
          val store = p.getStore(version)
          (0 until PerVersion).foreach(i => store.put(key(s"key-$v-$i", i), value(i.toLong)))
          version = store.commit()
          p.doMaintenance()
          p.localStore.db.liveSstBytes
        }
        val last = p.getStore(version)
        last.commit()
        val liveRows = last.metrics.numKeys
        p.localStore.db.compactNow()
        Run(series, liveRows, p.localStore.db.liveSstBytes)
      }
    } finally FileUtils.deleteQuietly(dir)
  }
}
