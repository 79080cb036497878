package io.ttlstore.config

import org.apache.spark.internal.Logging

/**
 * Settings of Spark's RocksDB provider that a query sets and ttlstore does not read
 * ([[SparkStateSettings.rocksDbProviderKeys]]): each is logged once per JVM, naming what tunes
 * ttlstore's RocksDB instead, so that a query moved from Spark's provider does not lose them silently.
 */
object IgnoredSettings extends Logging {
  private val logged = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  def warnOnce(confs: Map[String, String]): Unit =
    SparkStateSettings.rocksDbProviderKeys(confs).filter(logged.add).foreach { key =>
      logWarning(s"$key is a setting of Spark's RocksDB provider, which ttlstore does not read; ttlstore's " +
        s"own settings (${ConfigKey.Prefix}*) tune its RocksDB (see docs/configuration.md).")
    }
}
