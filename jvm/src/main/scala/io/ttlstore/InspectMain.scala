package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization

import io.ttlstore.errors.TtlStoreException

/**
 * `ttlstore inspect` without a Spark session: `java -cp <pyspark's jars>:<ttlstore jar>
 * io.ttlstore.InspectMain CHECKPOINT [--quick]`. It prints JSON lines, the overview first, then one
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
  private implicit val formats: Formats = DefaultFormats

  def main(args: Array[String]): Unit = {
    val (flags, paths) = args.toSeq.partition(_.startsWith("--"))
    val checkpoint = paths.headOption.getOrElse(fail("usage: InspectMain CHECKPOINT [--quick]"))
    val scan = !flags.contains("--quick")
    val hadoopConf = new Configuration()
    try {
      val overview = CheckpointInspector.readOverview(checkpoint, hadoopConf)
      emit(Map("overview" -> overview))
      for (op <- overview.operators; store <- op.stores; p <- store.partitions) {
        val report = CheckpointInspector.readStore(checkpoint, op.id, store.name, p, scan, hadoopConf)
        emit(Map("operator" -> op.id, "store" -> store.name, "report" -> report))
      }
    } catch {
      case e: TtlStoreException => fail(e.getMessage)
      case NonFatal(e) => fail(s"reading $checkpoint failed: $e")
    }
    System.out.flush()
    sys.exit(0)
  }

  private def emit(line: Map[String, Any]): Unit = {
    System.out.println(Serialization.write(line))
    System.out.flush()
  }

  private def fail(message: String): Nothing = {
    emit(Map("error" -> message))
    sys.exit(2)
  }
}
