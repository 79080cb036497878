package io.ttlstore.bench

import java.nio.file.{Files, Paths}

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.execution.streaming.state.StateStoreProvider

import io.ttlstore.StoreFixtures._

/**
 * `make bench` (store level): adopting a store of Spark's own provider with `Keys` keys, as the
 * first load after `ttlstore migrate` does. For Spark's RocksDB provider (with and without changelog
 * checkpointing) and its HDFS provider, one store is written with `Keys` keys; then:
 *  - a normal batch on Spark's provider (`BatchOps` updates of existing keys on a loaded store), and
 *    its first batch after a restart (which loads the state);
 *  - the first batch after the migration on ttlstore (its load adopts the state), and the bytes it
 *    wrote below the checkpoint, set against the size of Spark's state;
 *  - a normal batch on ttlstore right after (the adopted store loaded).
 * Writes JSON to the path given.
 */
object AdoptionBench {
  private val Keys = 1000000
  private val PerVersion = 200000
  private val BatchOps = 10000
  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
  private val ChangelogKey = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"

  /** One batch on `version`: `BatchOps` updates of existing keys; returns its wall time (ms). */
  private def batch(p: StateStoreProvider, version: Long, seed: Int): Double = {
    val start = System.nanoTime()
    val store = p.getStore(version)
    (0 until BatchOps).foreach { i =>
      val k = key(s"user${(i * 7919L + seed) % Keys}")
      val old = store.get(k)
      store.put(k, value((if (old == null) 0L else countOf(old)) + 1))
    }
    store.commit()
    (System.nanoTime() - start) / 1e6
  }

  private def run(label: String, provider: String, settings: (String, String)*): String = {
    val dir = Files.createTempDirectory("ttlstore-adoption").toFile
    try {
      val conf = storeConf(settings: _*)
      val versions = Keys / PerVersion
      val sparkNormalMs = withProvider(newProvider(provider, dir, conf)) { p =>
        (0 until versions).foreach { v =>
          val store = p.getStore(v)
          (v * PerVersion until (v + 1) * PerVersion).foreach(i => store.put(key(s"user$i"), value(i)))
          store.commit()
          p.doMaintenance()
        }
        batch(p, versions, 1) // warm
        val ms = batch(p, versions + 1, 2)
        p.doMaintenance()
        ms
      }
      // A restart on Spark's own provider: its first batch loads the state too.
      val sparkFirstMs = withProvider(newProvider(provider, dir, conf)) { p =>
        val ms = batch(p, versions + 2L, 5)
        p.doMaintenance()
        ms
      }
      val stateBytes = FileUtils.sizeOfDirectory(dir)
      val adopted = versions + 3L
      withProvider(newProvider(TtlProvider, dir, conf)) { p =>
        val firstMs = batch(p, adopted, 3)
        val written = FileUtils.sizeOfDirectory(dir) - stateBytes
        val normalMs = batch(p, adopted + 1, 4)
        s""""$label": {"keys": $Keys, "state_bytes": $stateBytes, "first_batch_ms": $firstMs, """ +
          s""""normal_batch_ms": $normalMs, "spark_normal_batch_ms": $sparkNormalMs, """ +
          s""""spark_first_batch_after_restart_ms": $sparkFirstMs, """ +
          s""""bytes_written_by_first_batch": $written, "written_share": ${written.toDouble / stateBytes}}"""
      }
    } finally FileUtils.deleteQuietly(dir)
  }

  def main(args: Array[String]): Unit = {
    val parts = Seq(
      run("rocksdb", RocksDbProvider),
      run("rocksdb_changelog", RocksDbProvider, ChangelogKey -> "true"),
      run("hdfs", HdfsProvider))
    val json = s"""{"batch_ops": $BatchOps, ${parts.mkString(", ")}}"""
    Files.writeString(Paths.get(args.headOption.getOrElse("bench-output/adoption.json")), json + "\n")
    println(json)
  }
}
