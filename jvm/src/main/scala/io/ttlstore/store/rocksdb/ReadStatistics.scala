package io.ttlstore.store.rocksdb

import scala.util.Try

import io.ttlstore.compat.CollectionConverters._

import org.rocksdb.{DBOptions, HistogramType, Statistics, StatsLevel, TickerType}

/**
 * RocksDB's statistics of every store of this JVM, when a query turns them on with the test hook
 * `rocksdbStatistics` ([[io.ttlstore.config.TestHooks]]): one `Statistics` that every store opened
 * from then on counts into, so that a read profile (bench/read_profile.py) can divide what RocksDB
 * did (filters checked, blocks read from the cache and from files, the level a key was found in) by
 * the reads that did it. Off, no store pays for counting.
 */
object ReadStatistics {

  @volatile private var statistics: Statistics = _

  /** Makes `options` count into this JVM's statistics, made on first use. */
  def attachTo(options: DBOptions): Unit = {
    if (statistics == null) synchronized {
      if (statistics == null) {
        val s = new Statistics()
        s.setStatsLevel(StatsLevel.EXCEPT_DETAILED_TIMERS)
        statistics = s
      }
    }
    options.setStatistics(statistics)
  }

  /**
   * Every ticker by its RocksJava name, and every histogram's count and sum (`<NAME>.count`,
   * `<NAME>.sum`), as counted so far; empty while no store has counted.
   */
  def snapshot(): java.util.Map[String, java.lang.Double] = {
    val s = statistics
    val figures = Map.newBuilder[String, java.lang.Double]
    if (s != null) {
      // A name the native library of this line does not know is left out.
      TickerType.values.filterNot(_.name.endsWith("ENUM_MAX")).foreach { t =>
        Try(s.getTickerCount(t)).foreach(n => figures += t.name -> java.lang.Double.valueOf(n.toDouble))
      }
      HistogramType.values.filterNot(_.name.endsWith("ENUM_MAX")).foreach { h =>
        Try(s.getHistogramData(h)).foreach { data =>
          figures += s"${h.name}.count" -> java.lang.Double.valueOf(data.getCount.toDouble)
          figures += s"${h.name}.sum" -> java.lang.Double.valueOf(data.getSum.toDouble)
        }
      }
    }
    figures.result().asJava
  }
}
