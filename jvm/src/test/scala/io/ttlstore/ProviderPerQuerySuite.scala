package io.ttlstore

import java.io.File
import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Encoders, ForeachWriter, SparkSession}
import org.apache.spark.sql.execution.streaming.RealTimeTrigger
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream
import org.apache.spark.sql.streaming.{OutputMode, StatefulProcessor, StreamingQuery, TTLConfig, TimeMode, TimerValues, ValueState}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig

/**
 * One session, several providers (Spark 4.3): queries that need Spark's own RocksDB provider
 * (`transformWithState`, Real-Time Mode) run beside ttlstore's, the provider set in the session before
 * each start and ttlstore's settings left in it. tests/test_provider_per_query.py proves the same from
 * PySpark on every line.
 */
class ProviderPerQuerySuite extends AnyFunSuite with BeforeAndAfterAll {
  import ProviderPerQuerySuite._

  // Real-Time Mode runs the source and the stateful stage at once: 2 + 2 task slots.
  private lazy val spark: SparkSession = localSpark("ttlstore-per-query", "local[4]",
    "spark.sql.extensions" -> classOf[TtlStoreExtensions].getName, ProviderKey -> TtlProvider,
    TtlStoreConfig.Ttl.key -> "1 hour")

  override def afterAll(): Unit = spark.stop()

  /** Runs `start` with the session naming Spark's RocksDB provider (and `more`), then names ttlstore again. */
  private def onSparksProvider(more: (String, String)*)(start: => StreamingQuery): StreamingQuery = {
    spark.conf.set(ProviderKey, RocksDbProvider)
    more.foreach { case (k, v) => spark.conf.set(k, v) }
    try start
    finally {
      spark.conf.set(ProviderKey, TtlProvider)
      more.foreach { case (k, _) => spark.conf.unset(k) }
    }
  }

  /** A ttlstore deduplication of `input` into the memory table `name`. */
  private def ttlDedup(input: MemoryStream[String], dir: File, name: String): StreamingQuery =
    input.toDS().dropDuplicates("value").writeStream.format("memory").queryName(name)
      .option("checkpointLocation", new File(dir, name).getPath).start()

  private def table(name: String): Set[String] = spark.table(name).collect().map(_.getString(0)).toSet

  test("transformWithState on Spark's RocksDB provider runs beside a ttlstore query, ttlstore's settings set") {
    withTempDir { dir =>
      import spark.implicits._
      val words = MemoryStream[String](spark)
      val events = MemoryStream[String](spark)
      val ours = ttlDedup(words, dir, "per_query_dedup")
      val theirs = onSparksProvider() {
        events.toDS().groupByKey(identity).transformWithState(new RunningCount, TimeMode.None(), OutputMode.Update())
          .writeStream.format("memory").outputMode("update").queryName("per_query_counts")
          .option("checkpointLocation", new File(dir, "counts").getPath).start()
      }
      try {
        words.addData("a", "b", "a")
        events.addData("a", "a", "b")
        ours.processAllAvailable()
        theirs.processAllAvailable()
        words.addData("a", "c")
        events.addData("a")
        ours.processAllAvailable()
        theirs.processAllAvailable()
        assert(table("per_query_dedup") == Set("a", "b", "c"))
        val counts = spark.table("per_query_counts").as[(String, Long)].collect()
        assert(counts.groupBy(_._1).map { case (k, cs) => k -> cs.map(_._2).max } == Map("a" -> 3L, "b" -> 1L))
      } finally {
        ours.stop()
        theirs.stop()
      }
      assert(pinned(new File(dir, "per_query_dedup")) == TtlProvider)
      assert(pinned(new File(dir, "counts")) == RocksDbProvider)
    }
  }

  test("Real-Time Mode on Spark's RocksDB provider runs beside a ttlstore query, ttlstore's settings set") {
    withTempDir { dir =>
      import spark.implicits._
      emitted.clear()
      val words = MemoryStream[String](spark)
      val ours = ttlDedup(words, dir, "per_query_rtm_dedup")
      val input = LowLatencyMemoryStream[String](2)(Encoders.STRING, spark.sqlContext)
      input.addData("x", "y", "x")
      var realTime: StreamingQuery = null
      try {
        // ttlstore's batch runs before the Real-Time query starts: each Real-Time batch needs all four slots of
        // local[4] free when it begins, and fails (CONCURRENT_SCHEDULER_INSUFFICIENT_SLOT) if a batch of ours holds
        // some then. The queries still run side by side: ours takes "b" below while the Real-Time one is active.
        words.addData("a", "a")
        ours.processAllAvailable()
        realTime = onSparksProvider(FormatKey -> "2") {
          input.toDS().dropDuplicates("value").writeStream.outputMode("update").foreach(new Collect)
            .option("checkpointLocation", new File(dir, "rtm").getPath).trigger(RealTimeTrigger("5 seconds")).start()
        }
        val deadline = System.nanoTime() + 60L * 1000000000L
        while (emitted.asScala.toSet != Set("x", "y") && System.nanoTime() < deadline && realTime.isActive) {
          Thread.sleep(100)
        }
        assert(realTime.exception.isEmpty && emitted.asScala.toSet == Set("x", "y"), realTime.exception)
        words.addData("b")
        ours.processAllAvailable()
        assert(table("per_query_rtm_dedup") == Set("a", "b"))
      } finally {
        ours.stop()
        if (realTime != null) realTime.stop()
      }
      assert(pinned(new File(dir, "rtm")) == RocksDbProvider)
    }
  }
}

object ProviderPerQuerySuite {
  val ProviderKey = "spark.sql.streaming.stateStore.providerClass"
  val FormatKey = "spark.sql.streaming.stateStore.checkpointFormatVersion"
  val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  val emitted = new ConcurrentLinkedQueue[String]()

  final class Collect extends ForeachWriter[String] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(value: String): Unit = emitted.add(value)
    override def close(errorOrNull: Throwable): Unit = ()
  }

  /** A running count per key, in a value state of Spark's provider. */
  final class RunningCount extends StatefulProcessor[String, String, (String, Long)] {
    @transient private var count: ValueState[Long] = _

    override def init(outputMode: OutputMode, timeMode: TimeMode): Unit =
      count = getHandle.getValueState[Long]("count", Encoders.scalaLong, TTLConfig.NONE)

    override def handleInputRows(
        key: String, rows: Iterator[String], timerValues: TimerValues): Iterator[(String, Long)] = {
      val n = (if (count.exists()) count.get() else 0L) + rows.size
      count.update(n)
      Iterator(key -> n)
    }
  }

  /** The provider Spark pinned in the newest offset log entry of the checkpoint `dir`. */
  def pinned(dir: File): String = {
    val offsets = new File(dir, "offsets").listFiles().filter(_.getName.forall(_.isDigit))
    val newest = offsets.maxBy(_.getName.toLong)
    val metadata = Files.readAllLines(newest.toPath).get(1)
    ("\"" + java.util.regex.Pattern.quote(ProviderKey) + "\":\"([^\"]+)\"").r.findFirstMatchIn(metadata).get.group(1)
  }
}
