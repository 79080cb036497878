package io.ttlstore

import io.ttlstore.compat.Parse
import io.ttlstore.repartition.Repartitioner
import io.ttlstore.tools.ToolLines.{emit, fail}
import io.ttlstore.tools.ToolMain

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

  def main(args: Array[String]): Unit =
    ToolMain.run(Usage, Set("--dry-run"), Set("--partitions"), "repartitioning", args) { a =>
      val n = a.options.get("--partitions").getOrElse(fail(Usage))
      val partitions = Parse.int(n).getOrElse(fail(s"--partitions takes a number, got '$n'"))
      val report = Repartitioner.run(a.checkpoint, partitions, a.flag("--dry-run"), a.hadoopConf,
        op => emit(Map("operator" -> op)))
      emit(Map("report" -> report))
    }
}
