package io.ttlstore

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.{Dataset, Row, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._

/**
 * Operators with no Python API, end to end on a real local Spark: the same query on Spark's HDFS
 * provider and on ttlstore, stopped and restarted from its checkpoint between rounds, must emit the
 * same rows. (The Python suite covers every other operator the same way.)
 */
class OperatorsEndToEndSuite extends AnyFunSuite with BeforeAndAfterAll {

  private lazy val spark: SparkSession = localSpark("ttlstore-e2e", "local[2]")

  override def afterAll(): Unit = spark.stop()

  private def runRounds(provider: String, rounds: Seq[Seq[(String, Int)]])(
      build: Dataset[(String, Int)] => Dataset[_]): Seq[Set[Row]] = withTempDir { dir =>
    import spark.implicits._
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
    val input = MemoryStream[(String, Int)](spark)
    try rounds.map { rows =>
        input.addData(rows)
        val emitted = ArrayBuffer.empty[Row]
        val query = build(input.toDS()).toDF().writeStream
          .outputMode(OutputMode.Update())
          .foreachBatch((df: Dataset[Row], _: Long) => { emitted ++= df.collect(); () })
          .option("checkpointLocation", dir.getAbsolutePath)
          .start()
        try query.processAllAvailable()
        finally query.stop()
        emitted.toSet
      }
    finally spark.conf.unset("spark.sql.streaming.stateStore.providerClass")
  }

  test("flatMapGroupsWithState emits the same rows as on Spark's HDFS provider, across restarts") {
    val rng = new scala.util.Random(11)
    val rounds = Seq.fill(5)(Seq.fill(25)(s"k${rng.nextInt(8)}" -> rng.nextInt(100)))
    def query(ds: Dataset[(String, Int)]): Dataset[_] = {
      import spark.implicits._
      ds.groupByKey(_._1).flatMapGroupsWithState(OutputMode.Update(), GroupStateTimeout.NoTimeout())(
        OperatorsEndToEndSuite.runningCount)
    }
    val reference = runRounds(HdfsProvider, rounds)(query)
    val ours = runRounds(TtlProvider, rounds)(query)
    assert(reference.map(_.size).sum > 0)
    assert(ours == reference)
  }

  test("mapGroupsWithState emits the same rows as on Spark's HDFS provider, across restarts") {
    val rng = new scala.util.Random(12)
    val rounds = Seq.fill(4)(Seq.fill(20)(s"k${rng.nextInt(6)}" -> rng.nextInt(10)))
    def query(ds: Dataset[(String, Int)]): Dataset[_] = {
      import spark.implicits._
      ds.groupByKey(_._1).mapGroupsWithState(GroupStateTimeout.NoTimeout()) {
        (key: String, values: Iterator[(String, Int)], state: GroupState[Long]) =>
          val sum = state.getOption.getOrElse(0L) + values.map(_._2.toLong).sum
          state.update(sum)
          key -> sum
      }
    }
    val reference = runRounds(HdfsProvider, rounds)(query)
    val ours = runRounds(TtlProvider, rounds)(query)
    assert(reference.map(_.size).sum > 0)
    assert(ours == reference)
  }
}

object OperatorsEndToEndSuite {

  /** A running count per key that forgets the key once it reaches 4 (outside the suite: shipped). */
  def runningCount(key: String, values: Iterator[(String, Int)], state: GroupState[Long]): Iterator[(String, Long)] = {
    val count = state.getOption.getOrElse(0L) + values.size
    if (count >= 4) state.remove() else state.update(count)
    Iterator(key -> count)
  }
}
