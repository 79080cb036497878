package io.ttlstore

import io.ttlstore.tools.ToolLines.emit
import io.ttlstore.tools.ToolMain

/**
 * `ttlstore inspect` without a Spark session: `java -cp <pyspark's jars>:<ttlstore jar>
 * io.ttlstore.InspectMain CHECKPOINT [--quick] [--conf KEY=VALUE]...`. CHECKPOINT is any URI
 * Hadoop reads (`hdfs://`, `s3a://`, `file:`, a plain path), with the Hadoop settings `--conf` gives
 * (`spark.hadoop.` is taken off, as Spark does). It prints JSON lines, the overview first, then one
 * line per store partition as it is read (the CLI's progress bar follows them):
 * {{{
 *   {"overview": {...}}
 *   {"operator": 0, "store": "default", "report": {...}}
 *   {"error": "[NOT_A_CHECKPOINT] ..."}        (then exit code 2)
 * }}}
 * The facts are [[CheckpointInspector]]'s. A local Spark session costs the CLI half a minute on a
 * small machine; this JVM loads only Hadoop's file system and, to count rows, RocksDB.
 */
object InspectMain {
  private val Usage = "usage: InspectMain CHECKPOINT [--quick] [--conf KEY=VALUE]..."

  def main(args: Array[String]): Unit =
    ToolMain.run(Usage, Set("--quick"), Set.empty, "reading", args) { a =>
      val overview = CheckpointInspector.readOverview(a.checkpoint, a.hadoopConf)
      emit(Map("overview" -> overview))
      for (op <- overview.operators; store <- op.stores; p <- store.partitions) {
        val report = CheckpointInspector.readStore(a.checkpoint, op.id, store.name, p, !a.flag("--quick"), a.hadoopConf)
        emit(Map("operator" -> op.id, "store" -> store.name, "report" -> report))
      }
    }
}
