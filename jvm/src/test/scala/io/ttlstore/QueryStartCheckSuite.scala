package io.ttlstore

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions.expr
import org.apache.spark.sql.streaming.StreamingQueryException
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.config.ExecutorOverhead
import io.ttlstore.config.TtlStoreConfig._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.testkit.ConfTestHooks

/** The driver-side check of `TtlStoreExtensions`: bad TTL settings fail before any task runs. */
class QueryStartCheckSuite extends AnyFunSuite with BeforeAndAfterAll {

  private lazy val spark: SparkSession = localSpark("ttlstore-start-check", "local[2]",
    "spark.sql.extensions" -> classOf[TtlStoreExtensions].getName,
    "spark.sql.streaming.stateStore.providerClass" -> TtlProvider)

  override def afterAll(): Unit = spark.stop()

  /** Runs `build` over one round of input with `settings` set; returns the failure, if any. */
  private def run(settings: Map[String, String])(build: (
          DataFrame, DataFrame) => DataFrame): Option[Throwable] = withTempDir { dir =>
    import spark.implicits._
    settings.foreach { case (k, v) => spark.conf.set(k, v) }
    val left = MemoryStream[(String, Int)](spark)
    val right = MemoryStream[(String, Int)](spark)
    left.addData(("a", 1)); right.addData(("a", 2))
    try {
      val df = build(left.toDF().toDF("k", "v"), right.toDF().toDF("k2", "w"))
      // Aggregations without a watermark emit in update mode; joins only in append mode.
      val mode = if (df.queryExecution.analyzed.toString.contains("Join")) "append" else "update"
      val query = df.writeStream.outputMode(mode)
        .format("noop").option("checkpointLocation", dir.getAbsolutePath).start()
      try { query.processAllAvailable(); None }
      catch { case e: StreamingQueryException => Some(e.getCause) }
      finally query.stop()
    } finally settings.keys.foreach(spark.conf.unset)
  }

  private def dedupAndCount(l: DataFrame, r: DataFrame): DataFrame =
    l.dropDuplicates("k").groupBy("k").count()

  private def join(l: DataFrame, r: DataFrame): DataFrame = l.join(r, expr("k = k2"))

  test("settings for operators the query has pass; the query runs") {
    assert(run(Map(Ttl.key -> "1h", Prefix + "operator.1.ttl" -> "10s"))(dedupAndCount).isEmpty)
  }

  test("a key naming an operator the query does not have fails at the first batch, on the driver") {
    val e = run(Map(Prefix + "operator.7.ttl" -> "10s"))(dedupAndCount).get
    val error = e.asInstanceOf[TtlStoreException]
    assert(error.errorName == "UNKNOWN_OPERATOR" && error.getMessage.contains(Prefix + "operator.7.ttl"))
    assert(error.getMessage.contains("1 (StreamingDeduplicate)"), error.getMessage)
    assert(!e.getStackTrace.exists(_.getClassName.startsWith("org.apache.spark.executor.")), "thrown by a task")
    assert(e.getStackTrace.exists(_.getClassName.contains("QueryExecution")), "thrown while planning")
  }

  test("a store name the operator does not have fails naming its stores") {
    val e = run(Map(Prefix + "operator.0.store.left.ttl" -> "10s"))(dedupAndCount).get
    assert(e.asInstanceOf[TtlStoreException].errorName == "UNKNOWN_STORE")
    assert(e.getMessage.contains("default"))
  }

  test("nativeFilter.enabled=true without the library fails on the driver; auto runs on the JVM sweep") {
    val missing = ConfTestHooks.NativeFilterResource.key -> "/io/ttlstore/native/none/libttlstore_filter.so"
    val e = run(Map(Ttl.key -> "1h", NativeFilterEnabled.key -> "true", missing))(dedupAndCount).get
    assert(e.asInstanceOf[TtlStoreException].errorName == "NATIVE_FILTER_UNAVAILABLE")
    assert(e.getMessage.contains(NativeFilterEnabled.key) && e.getMessage.contains("operator 0"))
    assert(!e.getStackTrace.exists(_.getClassName.startsWith("org.apache.spark.executor.")), "thrown by a task")
    assert(run(Map(Ttl.key -> "1h", missing))(dedupAndCount).isEmpty)
  }

  test("a budget the executors' enforced overhead cannot hold fails at start; in local mode it stands") {
    val ops = Seq(QueryStartCheck.Operator(0L, "StreamingDeduplicate", Seq("default")))
    val yarn = ExecutorOverhead.of(Map("spark.master" -> "yarn", "spark.executor.memory" -> "2g"),
      minOverheadSetting = true)
    val e = intercept[TtlStoreException](QueryStartCheck.check(Map(MaxMemoryUsageMb.key -> "512"), ops, yarn))
    assert(e.errorName == "BUDGET_EXCEEDS_OVERHEAD" && e.getMessage.contains("1312 MiB"), e.getMessage)
    QueryStartCheck.check(Map.empty, ops, yarn)
    assert(run(Map(MaxMemoryUsageMb.key -> "512"))(dedupAndCount).isEmpty)
  }

  test("an invalid value fails on the driver, naming the key") {
    val e = run(Map(Prefix + "operator.0.ttl" -> "-5 minutes"))(dedupAndCount).get
    assert(e.asInstanceOf[TtlStoreException].errorName == "INVALID_CONFIG")
    assert(e.getMessage.contains(Prefix + "operator.0.ttl"))
  }

  test("TTL on a stream-stream join is refused at start, unless allowed or given to other operators") {
    val refused = run(Map(Ttl.key -> "1h"))(join).get
    assert(refused.asInstanceOf[TtlStoreException].errorName == "TTL_ON_STREAM_STREAM_JOIN")
    assert(run(Map(Ttl.key -> "1h", AllowTtlOnStreamStreamJoin.key -> "true"))(join).isEmpty)
    assert(run(Map(Ttl.key -> "1h", Prefix + "operator.0.ttl" -> "0"))(join).isEmpty)
  }
}
