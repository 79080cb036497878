package io.ttlstore.bench

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Paths}

import org.apache.commons.io.FileUtils

import io.ttlstore.StoreFixtures._
import io.ttlstore.TtlStateStoreProvider
import io.ttlstore.config.TtlStoreConfig
import io.ttlstore.ttl.ManualClock

/**
 * `make bench` (store level): the CPU it takes to get expired rows off the disk, per row, with the
 * JVM sweep and with the native compaction filter. One store holds `Rows` rows, all of which then
 * expire; from there each path runs to the end:
 *  - sweep: a commit whose sweep scans every row and deletes it (tombstone + changelog record),
 *    then a full compaction that drops the rows and their tombstones;
 *  - filter: a commit (which only uncounts the expired rows), then a full compaction in which the
 *    filter drops them.
 * CPU is the whole process's (RocksDB compacts on its own threads), measured around each step; the
 * rows were loaded and compacted once before, so both compactions start from the same files.
 * Rounds alternate the paths; the figures are medians. Writes JSON to the path given.
 */
object ExpiryCpuBench {
  private val Rows = 1000000
  private val PerVersion = 125000
  private val Ttl = 10L

  final case class Figures(commitNs: Long, compactNs: Long, removed: Long) {
    def perRowNs: Double = (commitNs + compactNs).toDouble / math.max(removed, 1L)
  }

  def main(args: Array[String]): Unit = {
    val rounds = 3
    run(filter = true); run(filter = false) // warm-up (JIT)
    val results = (1 to rounds).flatMap(_ => Seq(true -> run(filter = true), false -> run(filter = false)))
    def median(fs: Seq[Figures], f: Figures => Double) = fs.map(f).sorted.apply(fs.size / 2)
    val filter = results.filter(_._1).map(_._2)
    val sweep = results.filterNot(_._1).map(_._2)
    def summary(name: String, fs: Seq[Figures]) =
      s""""$name": {"rows_removed": ${fs.head.removed}, "commit_ns_per_row": ${median(fs,
          f => f.commitNs.toDouble / f.removed)}, """ +
        s""""compaction_ns_per_row": ${median(fs, f => f.compactNs.toDouble / f.removed)}, "total_ns_per_row": ${median(
            fs, _.perRowNs)}}"""
    val json = Seq(summary("sweep", sweep), summary("filter", filter)).mkString("{\n  ", ",\n  ", "\n}\n")
    Files.write(Paths.get(args.headOption.getOrElse("bench-output/expiry-cpu.json")), json.getBytes("UTF-8"))
    println(json)
  }

  private def cpuNs: Long = ManagementFactory.getOperatingSystemMXBean
    .asInstanceOf[com.sun.management.OperatingSystemMXBean].getProcessCpuTime

  private def measured[T](body: => T): (T, Long) = {
    val start = cpuNs
    val out = body
    (out, cpuNs - start)
  }

  /** Loads the rows at time 0, then removes them all at time TTL by one path. */
  private def run(filter: Boolean): Figures = {
    val dir = Files.createTempDirectory("ttlstore-expiry-cpu").toFile
    try {
      val conf = storeConf(TtlStoreConfig.Ttl.key -> Ttl.toString,
        TtlStoreConfig.NativeFilterEnabled.key -> filter.toString,
        TtlStoreConfig.SweepRowsPerCommit.key -> "100000000",
        TtlStoreConfig.CompactExpiredShare.key -> "0",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "1000")
      val clock = new ManualClock(0L)
      withProvider(newProvider(TtlProvider, dir, conf, clock = Some(clock)).asInstanceOf[TtlStateStoreProvider]) { p =>
        var version = 0L
        (0 until Rows by PerVersion).foreach { start =>
          val store = p.getStore(version)
          (start until start + PerVersion).foreach(i => store.put(key(s"key-$i", i), value(i.toLong)))
          version = store.commit()
        }
        p.localStore.db.compactNow() // both paths start from the same compacted files
        clock.set(Ttl)
        val store = p.getStore(version)
        val (_, commitNs) = measured(store.commit())
        val m = store.metrics.customMetrics.map { case (k, v) => k.name -> v }
        val (_, compactNs) = measured(p.localStore.db.compactNow())
        val after = p.getStore(version + 1)
        after.commit()
        val removed = if (filter)
          after.metrics.customMetrics.map { case (k, v) => k.name -> v }("ttlstoreExpiredRemovedByFilter")
        else m("ttlstoreExpiredRemovedBySweep")
        require(removed == Rows, s"expected $Rows rows removed, got $removed (filter=$filter)")
        Figures(commitNs, compactNs, removed)
      }
    } finally FileUtils.deleteQuietly(dir)
  }
}
