package io.ttlstore

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{ForeachWriter, SparkSession}
import org.apache.spark.sql.execution.streaming.RealTimeTrigger
import org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream
import org.apache.spark.sql.streaming.StreamingQuery
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._

/**
 * Spark 4.3's Real-Time Mode and ttlstore: Spark runs it only on its own RocksDB provider, and a
 * checkpoint that pins ttlstore does not slip past that.
 */
class RealTimeModeSuite extends AnyFunSuite with BeforeAndAfterAll {
  import RealTimeModeSuite._

  // Real-Time Mode runs the source and the stateful stage at once: 2 + 2 task slots.
  private lazy val spark: SparkSession =
    localSpark("ttlstore-rtm", "local[4]", "spark.sql.extensions" -> classOf[TtlStoreExtensions].getName)

  override def afterAll(): Unit = spark.stop()

  private val ProviderKey = "spark.sql.streaming.stateStore.providerClass"
  private val FormatKey = "spark.sql.streaming.stateStore.checkpointFormatVersion"

  private def dedup(input: LowLatencyMemoryStream[String], dir: java.io.File, realTime: Boolean): StreamingQuery = {
    val writer = input.toDS().dropDuplicates("value").writeStream.outputMode("update")
      .foreach(new Collect).option("checkpointLocation", dir.getAbsolutePath)
    (if (realTime) writer.trigger(RealTimeTrigger("5 seconds")) else writer).start()
  }

  private def stream(): LowLatencyMemoryStream[String] = {
    import spark.implicits._
    LowLatencyMemoryStream[String](2)(implicitly, spark.sqlContext)
  }

  test("Spark runs Real-Time Mode on its own RocksDB provider only, and refuses ttlstore by name") {
    withTempDir { dir =>
      spark.conf.set(ProviderKey, TtlProvider)
      try {
        val refused = intercept[Exception](dedup(stream(), dir, realTime = true))
        assert(
          refused.getMessage.contains("STREAMING_REAL_TIME_MODE.SQL_CONFIGURATION_NOT_SUPPORTED") &&
            refused.getMessage.contains("RocksDBStateStoreProvider"), refused.getMessage)
      } finally spark.conf.unset(ProviderKey)
    }
  }

  test("a checkpoint that pins ttlstore, restarted in Real-Time Mode, fails naming the restriction") {
    withTempDir { dir =>
      emitted.clear()
      val input = stream()
      input.addData("a", "b", "a")
      // Checkpoint format v2, which Real-Time Mode requires.
      spark.conf.set(ProviderKey, TtlProvider)
      spark.conf.set(FormatKey, "2")
      try {
        val microBatch = dedup(input, dir, realTime = false)
        try microBatch.processAllAvailable()
        finally microBatch.stop()
      } finally {
        spark.conf.unset(ProviderKey)
        spark.conf.unset(FormatKey)
      }
      assert(emitted.asScala.toSet == Set("a", "b"))
      // The session sets no provider, so Spark's check passes; the offset log then pins ttlstore.
      input.addData("c")
      val realTime = dedup(input, dir, realTime = true)
      val failure = intercept[Exception] {
        try realTime.awaitTermination(60000)
        finally realTime.stop()
      }
      assert(failure.getMessage.contains("REAL_TIME_MODE_NOT_SERVED") && failure.getMessage.contains(dir.getName),
        failure.getMessage)
      assert(!emitted.asScala.toSet.contains("c"))
    }
  }
}

object RealTimeModeSuite {
  val emitted = new ConcurrentLinkedQueue[String]()

  final class Collect extends ForeachWriter[String] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(value: String): Unit = emitted.add(value)
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
