package io.ttlstore.repartition

import java.io.File
import java.nio.charset.StandardCharsets

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileSystem, Path}
import org.json4s.{JObject, JString}
import org.json4s.jackson.JsonMethods

import io.ttlstore.errors.RepartitionErrors
import io.ttlstore.spark.SparkClasses.CheckpointFileManager
import io.ttlstore.store.rocksdb.LocalWorkDirs

/**
 * `ttlstore repartition`: gives a stopped query's state a new number of partitions, offline, in
 * the checkpoint itself ([[RepartitionPlan]] says what and why). In order, as Spark's runner does:
 *   1. the offset log entry of the new batch: the last committed batch's, with the new
 *      `spark.sql.shuffle.partitions` (created only if absent: a query that started the same batch
 *      meanwhile makes one of the two fail, never both write it);
 *   2. every store's rows, as snapshots of the new version ([[StoreRepartitioner]]);
 *   3. the commit log entry of the new batch: the last committed batch's (same watermark).
 * Killed before 3, the batch stays uncommitted: Spark refuses to start the query
 * (`STREAMING_UNFINISHED_REPARTITION_DETECTED`) and running `repartition` again with the same
 * count finishes it. Nothing of the earlier versions changes, so the way back is to repartition
 * again to the old count.
 */
object Repartitioner {

  final case class StoreResult(name: String, rowsByPartition: Seq[Long]) {
    def rows: Long = rowsByPartition.sum
  }
  final case class OperatorResult(id: Long, name: String, stores: Seq[StoreResult])
  final case class Report(
      checkpoint: String,
      /** "repartitioned", "would repartition" (dry run), or "unchanged" (it already has the count). */
      action: String,
      fromPartitions: Int,
      toPartitions: Int,
      lastCommittedBatch: Option[Long],
      batch: Option[Long],
      retry: Boolean,
      operators: Seq[OperatorResult],
      durationMs: Long)

  def run(checkpoint: String, partitions: Int, dryRun: Boolean, hadoopConf: Configuration,
      progress: OperatorResult => Unit = _ => ()): Report = {
    val start = System.nanoTime()
    def took = (System.nanoTime() - start) / 1000000L
    RepartitionPlan.read(checkpoint, partitions, hadoopConf) match {
      case Left(current) => Report(checkpoint, "unchanged", current, partitions, None, None, retry = false, Nil, took)
      case Right(plan) if dryRun =>
        val ops = plan.operators.map(op => OperatorResult(op.id, op.name, op.stores.map(s => StoreResult(s.name, Nil))))
        Report(checkpoint, "would repartition", plan.fromPartitions, plan.toPartitions, Some(plan.lastCommittedBatch),
          Some(plan.batch), plan.retry, ops, took)
      case Right(plan) =>
        val root = new Path(checkpoint)
        if (!plan.retry) writeOffsets(root, plan, hadoopConf)
        val workDir = LocalWorkDirs.create(new File(System.getProperty("java.io.tmpdir")))
        val ops =
          try plan.operators.map { op =>
              val result = OperatorResult(op.id, op.name,
                op.stores.map { s =>
                  StoreResult(s.name, new StoreRepartitioner(plan, op.id, s, hadoopConf, workDir).run())
                })
              progress(result)
              result
            }
          finally LocalWorkDirs.release(workDir)
        copyEntry(root, "commits", plan.lastCommittedBatch, plan.batch, hadoopConf)(identity)
        Report(checkpoint, "repartitioned", plan.fromPartitions, plan.toPartitions, Some(plan.lastCommittedBatch),
          Some(plan.batch), plan.retry, ops, took)
    }
  }

  private def writeOffsets(root: Path, plan: RepartitionPlan, hadoopConf: Configuration): Unit =
    copyEntry(root, "offsets", plan.lastCommittedBatch, plan.batch, hadoopConf) { lines =>
      val json = JsonMethods.parse(lines(1)).mapField {
        case ("conf", conf: JObject) =>
          "conf" -> JObject(conf.obj.filterNot(_._1 == "spark.sql.shuffle.partitions") :+
            ("spark.sql.shuffle.partitions" -> JString(plan.toPartitions.toString)))
        case other => other
      }
      lines.updated(1, JsonMethods.compact(json))
    }

  /** Writes `<log>/<to>` as `<log>/<from>` changed by `edit` (its lines), if `<log>/<to>` is absent. */
  private def copyEntry(root: Path, log: String, from: Long, to: Long, hadoopConf: Configuration)(
      edit: Vector[String] => Vector[String]): Unit = {
    val dir = new Path(root, log)
    val source = new Path(dir, from.toString)
    val target = new Path(dir, to.toString)
    val fs: FileSystem = dir.getFileSystem(hadoopConf)
    val in = fs.open(source)
    val text =
      try IOUtils.toString(in, StandardCharsets.UTF_8)
      finally in.close()
    // Spark's log files end without a newline after the last line; keep the text as it is otherwise.
    val lines = edit(text.split("\n", -1).toVector)
    val fm = CheckpointFileManager.create(dir, hadoopConf)
    if (fm.exists(target)) throw RepartitionErrors.batchWrittenMeanwhile(target.toString)
    val out = fm.createAtomic(target, overwriteIfPossible = false)
    try out.write(lines.mkString("\n").getBytes(StandardCharsets.UTF_8))
    catch { case e: Throwable => out.cancel(); throw e }
    try out.close()
    catch { case _: FileAlreadyExistsException => throw RepartitionErrors.batchWrittenMeanwhile(target.toString) }
  }
}
