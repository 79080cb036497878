package io.ttlstore

import java.io.File
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.TaskContext
import org.apache.spark.sql.{ForeachWriter, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._

/**
 * Checkpoint format v2 as Spark drives it: a task that fails after its state store committed is
 * run again by Spark, and the query goes on from the retry's state, never the failed attempt's.
 * Compared with Spark's RocksDB provider under format v2 on the same query.
 */
class CheckpointV2EndToEndSuite extends AnyFunSuite with BeforeAndAfterAll {
  import CheckpointV2EndToEndSuite._

  // local[2,3]: a failed task is retried (up to 3 attempts), as on a cluster.
  private lazy val spark: SparkSession = localSpark("ttlstore-v2-e2e", "local[2,3]",
    "spark.sql.streaming.stateStore.checkpointFormatVersion" -> "2",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled" -> "true")

  override def afterAll(): Unit = spark.stop()

  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /**
   * Runs the rounds (one micro-batch each, the query restarted between them); batch `failAt` fails
   * once in partition 0 after its state committed, and Spark retries the task.
   */
  private def run(provider: String, dir: File, rounds: Seq[Seq[String]], failAt: Long): Seq[Set[Out]] = {
    import spark.implicits._
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
    emitted.clear()
    failed.clear()
    val input = MemoryStream[String](spark)
    try {
      // A new query run per round: each round's providers load their version from the files.
      rounds.foreach { rows =>
        input.addData(rows)
        val query = input.toDS().groupByKey(identity)
          .flatMapGroupsWithState(OutputMode.Update(), GroupStateTimeout.NoTimeout())(attemptState)
          .writeStream.outputMode(OutputMode.Update())
          .foreach(new FailingOnce(failAt))
          .option("checkpointLocation", dir.getAbsolutePath)
          .start()
        try query.processAllAvailable()
        finally query.stop()
      }
      assert(failed.asScala.toSeq == Seq(failAt), "the injected failure must have happened exactly once")
      emitted.asScala.toSeq.groupBy(_._1).toSeq.sortBy(_._1).map(_._2.map(_._2).toSet)
    } finally spark.conf.unset("spark.sql.streaming.stateStore.providerClass")
  }

  test("a task retried after its state committed leaves exactly the retry's state, as on Spark's RocksDB provider") {
    val rounds = Seq(Seq("a", "b", "c", "d"), Seq("a", "b", "c", "d", "e"), Seq("a", "b", "c", "d", "e"))
    withTempDir { rocksDir =>
      withTempDir { ttlDir =>
        val reference = run(RocksDbProvider, rocksDir, rounds, failAt = 1)
        val ours = run(TtlProvider, ttlDir, rounds, failAt = 1)
        assert(ours == reference)
        // The last batch, in a new query run that loaded version 2 from the files where both
        // attempts left theirs, saw what batch 1's retry wrote (attempt 1) in partition 0.
        val lastSeen = ours.last.collect { case (k, _, (p, attempt)) if p == 0 => k -> attempt }
        assert(lastSeen.nonEmpty && lastSeen.forall(_._2 == 1), ours.last)
        // Both attempts of that version committed, each under its own checkpoint id.
        val files = Option(new File(ttlDir, "state/0/0/ttlstore").list()).toSeq.flatten
        assert(files.count(n => n.startsWith("2_") && n.endsWith(".changelog")) == 2, files.sorted)
      }
    }
  }
}

object CheckpointV2EndToEndSuite {

  /** (key, count, (partition, attempt) of the task that wrote the state this batch started from). */
  type Out = (String, Long, (Int, Int))

  val emitted = new ConcurrentLinkedQueue[(Long, Out)]()
  val failed = new ConcurrentLinkedQueue[Long]()

  /** The state records the partition and attempt number of the task that wrote it. */
  def attemptState(key: String, values: Iterator[String], state: GroupState[(Long, Int, Int)]): Iterator[Out] = {
    val (count, partition, attempt) = state.getOption.getOrElse((0L, -1, -1))
    val ctx = TaskContext.get()
    state.update((count + values.size, ctx.partitionId(), ctx.attemptNumber()))
    Iterator((key, count, (partition, attempt)))
  }

  /** A sink whose first attempt of partition 0 in batch `failAt` fails when it closes: after the state committed. */
  final class FailingOnce(failAt: Long) extends ForeachWriter[Out] {
    private var batch = -1L
    private val rows = scala.collection.mutable.ArrayBuffer.empty[Out]
    override def open(partitionId: Long, epochId: Long): Boolean = { batch = epochId; true }
    override def process(value: Out): Unit = rows += value
    override def close(errorOrNull: Throwable): Unit = {
      val ctx = TaskContext.get()
      if (errorOrNull == null && batch == failAt && ctx.partitionId() == 0 && ctx.attemptNumber() == 0) {
        failed.add(batch)
        throw new IllegalStateException(s"injected failure of batch $batch after its state committed")
      }
      if (errorOrNull == null) rows.foreach(r => emitted.add(batch -> r))
    }
  }
}
