package io.ttlstore.readahead

import java.io.File

import org.apache.spark.sql.{Dataset, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.streaming.runtime.{MemoryStream, StreamingQueryWrapper}
import org.apache.spark.sql.functions.{col, count}
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode, StreamingQuery}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.TtlStoreExtensions
import io.ttlstore.StoreFixtures._
import io.ttlstore.config.TtlStoreConfig

/**
 * Where the read-ahead node goes in a real streaming query's plan (Spark 4.3): under each stateful operator ttlstore
 * serves and reads ahead, nowhere on another provider or with readAhead.rows = 0; and no store version stays
 * registered once the query's tasks end. Its rows and state are proven equal to Spark's HDFS provider's by the
 * differential tests (tests/test_operators_differential.py), which run with it on every line.
 */
class ReadAheadPlanSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark: SparkSession = localSpark("ttlstore-read-ahead", "local[2]",
    "spark.sql.extensions" -> classOf[TtlStoreExtensions].getName, ProviderKey -> TtlProvider,
    TtlStoreConfig.Ttl.key -> "1 hour")

  override def afterAll(): Unit = spark.stop()

  private val ProviderKey = "spark.sql.streaming.stateStore.providerClass"
  private val HdfsProvider = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

  /** The executed plan of `ds`'s first batch over two rows, as `mode`; the query stopped. */
  private def planOf(dir: File, mode: OutputMode, conf: (String, String)*)(
      ds: MemoryStream[(String, Long)] => Dataset[_]): SparkPlan = {
    import spark.implicits._
    val input = MemoryStream[(String, Long)](spark)
    conf.foreach { case (k, v) => spark.conf.set(k, v) }
    val query: StreamingQuery =
      try ds(input).writeStream.format("noop").outputMode(mode).option("checkpointLocation", dir.getPath).start()
      finally conf.foreach { case (k, _) => spark.conf.unset(k) }
    try {
      input.addData("a" -> 1L, "b" -> 2L)
      query.processAllAvailable()
      query.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution.executedPlan
    } finally query.stop()
  }

  /** The nodes directly above a read-ahead node, by name, and the keys each reads ahead. */
  private def servedIn(plan: SparkPlan): Seq[(String, Seq[String])] = plan.collect {
    case op if op.children.exists(_.isInstanceOf[ReadAheadExec]) =>
      op.nodeName -> op.children.collect { case r: ReadAheadExec => r.keys.map(_.name) }.flatten
  }

  private def dedup(in: MemoryStream[(String, Long)]) = in.toDF().dropDuplicates("_1")
  private def counts(in: MemoryStream[(String, Long)]) = in.toDF().groupBy("_1").agg(count("*"))

  test("a deduplication, within a watermark too, reads its keys ahead") {
    withTempDir { dir =>
      assert(servedIn(planOf(new File(dir, "d"), OutputMode.Append())(dedup)) == Seq(
        "StreamingDeduplicate" -> Seq("_1")))
      val within = planOf(new File(dir, "w"), OutputMode.Append()) { in =>
        in.toDF().withColumn("t", col("_2").cast("timestamp")).withWatermark("t", "1 hour")
          .dropDuplicatesWithinWatermark("_1")
      }
      assert(servedIn(within).map(_._1) == Seq("StreamingDeduplicateWithinWatermark"))
    }
  }

  test("an aggregation reads ahead under its restore, which reads the state the save then writes") {
    withTempDir { dir =>
      assert(servedIn(planOf(dir, OutputMode.Update())(counts)) == Seq("StateStoreRestore" -> Seq("_1")))
    }
  }

  test("flatMapGroupsWithState reads its grouping keys ahead") {
    withTempDir { dir =>
      import spark.implicits._
      val plan = planOf(dir, OutputMode.Update()) { in =>
        in.toDS().groupByKey(_._1).flatMapGroupsWithState(OutputMode.Update(), GroupStateTimeout.NoTimeout()) {
          (key: String, rows: Iterator[(String, Long)], state: GroupState[Long]) =>
            state.update(state.getOption.getOrElse(0L) + rows.size)
            Iterator(key -> state.get)
        }
      }
      assert(servedIn(plan).map(_._1) == Seq("FlatMapGroupsWithState"))
    }
  }

  test("no node on another provider, or with readAhead.rows = 0") {
    withTempDir { dir =>
      assert(servedIn(planOf(new File(dir, "h"), OutputMode.Append(), ProviderKey -> HdfsProvider)(dedup)).isEmpty)
      assert(servedIn(planOf(new File(dir, "z"), OutputMode.Append(), TtlStoreConfig.ReadAheadRows.key -> "0")(dedup))
          .isEmpty)
    }
  }

  test("no store version stays registered for reading ahead once the query's tasks end") {
    withTempDir { dir =>
      planOf(dir, OutputMode.Update())(counts)
      assert(ReadAheadTargets.size == 0)
    }
  }
}
