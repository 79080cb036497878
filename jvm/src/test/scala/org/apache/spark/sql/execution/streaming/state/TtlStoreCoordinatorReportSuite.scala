package org.apache.spark.sql.execution.streaming.state

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.streaming.runtime.{MemoryStream, StreamingQueryWrapper}
import org.apache.spark.sql.streaming.OutputMode
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._

/**
 * What ttlstore tells Spark's state store coordinator while a real query runs. In Spark's package
 * because the coordinator's figures are private to it.
 */
class TtlStoreCoordinatorReportSuite extends AnyFunSuite with BeforeAndAfterAll {

  private lazy val spark: SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName("ttlstore-coordinator")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  test("maintenance reports each snapshot upload to the coordinator, as Spark's providers do") {
    withTempDir { dir =>
      import spark.implicits._
      val settings = Map(
        "spark.sql.streaming.stateStore.providerClass" -> TtlProvider,
        "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "1",
        "spark.sql.streaming.stateStore.maintenanceInterval" -> "100ms")
      settings.foreach { case (k, v) => spark.conf.set(k, v) }
      val input = MemoryStream[Int](spark)
      val query = input.toDS().groupBy("value").count().writeStream
        .outputMode(OutputMode.Update())
        .format("noop")
        .option("checkpointLocation", dir.getAbsolutePath)
        .start()
      try {
        (1 to 4).foreach { i =>
          input.addData(i, i + 1, i + 2)
          query.processAllAvailable()
        }
        val coordinator = spark.sessionState.streamingQueryManager.stateStoreCoordinator
        val root = query.asInstanceOf[StreamingQueryWrapper].streamingQuery.resolvedCheckpointRoot
        val store = StateStoreProviderId(StateStoreId(s"$root/state", 0L, 0), query.runId)
        val deadline = System.nanoTime() + 60L * 1000000000L
        var reported = coordinator.getLatestSnapshotVersionForTesting(store)
        while (reported.isEmpty && System.nanoTime() < deadline) {
          Thread.sleep(100)
          reported = coordinator.getLatestSnapshotVersionForTesting(store)
        }
        assert(reported.exists(_ >= 1L), s"no snapshot upload of $store reached the coordinator")
      } finally {
        query.stop()
        settings.keys.foreach(spark.conf.unset)
      }
    }
  }
}
