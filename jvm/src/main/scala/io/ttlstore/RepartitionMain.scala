package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import io.ttlstore.tools.ToolLines
import io.ttlstore.tools.ToolLines.{emit, fail}
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.repartition.Repartitioner

/**
 * `ttlstore repartition` without a Spark session: `java -cp <pyspark's jars>:<ttlstore jar>
 * io.ttlstore.RepartitionMain CHECKPOINT --partitions N [--dry-run] [--conf KEY=VALUE]...`.
 * CHECKPOINT is any URI Hadoop reads, with the Hadoop settings `--conf` gives (`spark.hadoop.` is
 * taken off, as Spark does). It prints JSON lines: one per operator as it is done, then the report
 * ([[Repartitioner.Report]]), or an error (exit code 2):
 * {{{
 *   {"operator": {"id": 0, "name": "stateStoreSave", "stores": [...]}}
 *   {"report": {...}}
 *   {"error": "[UNCOMMITTED_BATCH] ..."}
 * }}}
 */
object RepartitionMain {
  private val Usage = "usage: RepartitionMain CHECKPOINT --partitions N [--dry-run] [--conf KEY=VALUE]..."

  private final case class Args(checkpoint: Option[String] = None, partitions: Option[Int] = None,
      dryRun: Boolean = false, conf: Seq[(String, String)] = Nil)

  def main(args: Array[String]): Unit = {
    val parsed = parse(args.toList, Args())
    val checkpoint = parsed.checkpoint.getOrElse(fail(Usage))
    val partitions = parsed.partitions.getOrElse(fail(Usage))
    val hadoopConf = new Configuration()
    parsed.conf.foreach { case (k, v) => hadoopConf.set(k, v) }
    try {
      val report = Repartitioner.run(checkpoint, partitions, parsed.dryRun, hadoopConf,
        op => emit(Map("operator" -> op)))
      emit(Map("report" -> report))
    } catch {
      case e: TtlStoreException => fail(e.getMessage)
      case NonFatal(e) => fail(s"repartitioning $checkpoint failed: $e")
    }
    sys.exit(0)
  }

  @scala.annotation.tailrec
  private def parse(args: List[String], acc: Args): Args = args match {
    case Nil => acc
    case "--dry-run" :: rest => parse(rest, acc.copy(dryRun = true))
    case "--partitions" :: n :: rest =>
      parse(rest, acc.copy(partitions = Some(n.toIntOption.getOrElse(fail(s"--partitions takes a number, got '$n'")))))
    case "--conf" :: setting :: rest => parse(rest, acc.copy(conf = acc.conf :+ ToolLines.hadoopSetting(setting)))
    case flag :: _ if flag.startsWith("--") => fail(Usage)
    case path :: rest if acc.checkpoint.isEmpty => parse(rest, acc.copy(checkpoint = Some(path)))
    case _ => fail(Usage)
  }

}
