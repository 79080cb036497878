package org.apache.spark.sql.execution.streaming.state

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.config.{ConfigKey, SparkStateSettings}
import io.ttlstore.errors.TtlStoreException

/** In Spark's package: the table is checked against SQLConf's entries, which only Spark's packages may list. */
class SparkStateSettingsSuite extends AnyFunSuite {

  /** Spark's state settings outside `spark.sql.streaming.stateStore.` that its providers read. */
  private val outside = Seq("spark.sql.streaming.minBatchesToRetain", "spark.sql.streaming.maxBatchesToRetainInMemory",
    "spark.sql.streaming.ratioExtraSpaceAllowedInCheckpoint", "spark.sql.streaming.checkpoint.fileChecksum.enabled",
    "spark.sql.streaming.checkpoint.fileChecksum.skipCreationIfFileMissingChecksum")

  test("every state store setting of the Spark on the classpath has a row, and every row is a setting of it") {
    val spark = SQLConf.getConfigEntries().asScala.map(_.key).toSet
    val state = spark.filter(k =>
      k.startsWith(ConfigKey.SparkStatePrefix) &&
        !k.startsWith(SparkStateSettings.RocksDbProviderPrefix) && !k.startsWith(ConfigKey.Prefix)) ++ outside
    val rows = SparkStateSettings.all.map(_.key).filterNot(_.endsWith(".*")).toSet
    assert(state -- rows == Set.empty, "Spark settings without a row in SparkStateSettings")
    assert(rows -- spark == Set.empty, "rows naming no setting of this Spark")
  }

  test("each row's default is Spark's (but the maintenance threads, which Spark computes from the cores)") {
    val defaults = SQLConf.getConfigEntries().asScala.map(e => e.key -> e.defaultValueString).toMap
    val differ = SparkStateSettings.all.collect {
      case s if defaults.contains(s.key) && defaults(s.key) != s.sparkDefault =>
        (s.key, s.sparkDefault, defaults(s.key))
    }
    assert(differ.map(_._1) == Seq("spark.sql.streaming.stateStore.numStateStoreMaintenanceThreads"))
  }

  test("the repair and deletion settings are read with Spark's defaults and checked") {
    assert(SparkStateSettings.snapshotRepair(Map.empty) == io.ttlstore.config.SnapshotRepair.SparkDefault)
    assert(!SparkStateSettings.snapshotRepair(Map(SparkStateSettings.AutoSnapshotRepairEnabled -> "false")).enabled)
    assert(SparkStateSettings.maxVersionsToDelete(Map.empty).isEmpty)
    assert(SparkStateSettings.maxVersionsToDelete(Map(SparkStateSettings.MaxVersionsToDeletePerMaintenance -> "3"))
        .contains(3))
    val e = intercept[TtlStoreException](
      SparkStateSettings.maxVersionsToDelete(Map(SparkStateSettings.MaxVersionsToDeletePerMaintenance -> "0")))
    assert(
      e.errorName == "INVALID_CONFIG" && e.getMessage.contains(SparkStateSettings.MaxVersionsToDeletePerMaintenance))
  }

  test(
    "the keys of Spark's RocksDB provider a user set are found, to be logged as not read; those Spark pins are not") {
    assert(SparkStateSettings.rocksDbProviderKeys(Map(
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled" -> "true",
        "spark.sql.streaming.stateStore.rocksdb.formatVersion" -> "5",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "5")) ==
      Seq("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"))
  }
}
