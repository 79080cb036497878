package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import io.ttlstore.tools.ToolLines
import io.ttlstore.tools.ToolLines.{emit, fail}
import io.ttlstore.errors.TtlStoreException

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

  private final case class Args(checkpoint: Option[String] = None, scan: Boolean = true,
      conf: Seq[(String, String)] = Nil)

  def main(args: Array[String]): Unit = {
    val parsed = parse(args.toList, Args())
    val checkpoint = parsed.checkpoint.getOrElse(fail(Usage))
    val hadoopConf = new Configuration()
    parsed.conf.foreach { case (k, v) => hadoopConf.set(k, v) }
    try {
      val overview = CheckpointInspector.readOverview(checkpoint, hadoopConf)
      emit(Map("overview" -> overview))
      for (op <- overview.operators; store <- op.stores; p <- store.partitions) {
        val report = CheckpointInspector.readStore(checkpoint, op.id, store.name, p, parsed.scan, hadoopConf)
        emit(Map("operator" -> op.id, "store" -> store.name, "report" -> report))
      }
    } catch {
      case e: TtlStoreException => fail(e.getMessage)
      case NonFatal(e) => fail(s"reading $checkpoint failed: $e")
    }
    System.out.flush()
    sys.exit(0)
  }

  @scala.annotation.tailrec
  private def parse(args: List[String], acc: Args): Args = args match {
    case Nil => acc
    case "--quick" :: rest => parse(rest, acc.copy(scan = false))
    case "--conf" :: setting :: rest => parse(rest, acc.copy(conf = acc.conf :+ ToolLines.hadoopSetting(setting)))
    case flag :: _ if flag.startsWith("--") => fail(Usage)
    case path :: rest if acc.checkpoint.isEmpty => parse(rest, acc.copy(checkpoint = Some(path)))
    case _ => fail(Usage)
  }

}
