package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.ttlstore.errors.TtlStoreException
import io.ttlstore.migrate.CheckpointMigration
import io.ttlstore.tools.ToolLines
import io.ttlstore.tools.ToolLines.{emit, fail}

/**
 * `ttlstore migrate` in a plain JVM: `java -cp <pyspark's jars>:<ttlstore jar> io.ttlstore.MigrateMain
 * CHECKPOINT [--dry-run] [--rollback] [--force] [--conf KEY=VALUE]...`. CHECKPOINT is any URI Hadoop
 * reads, with the Hadoop settings `--conf` gives. It prints one JSON line, `{"report": {...}}`
 * ([[io.ttlstore.migrate.MigrationReport]]) or `{"error": "[NAME] ..."}` (exit code 2).
 */
object MigrateMain {
  private val Usage = "usage: MigrateMain CHECKPOINT [--dry-run] [--rollback] [--force] [--conf KEY=VALUE]..."

  private final case class Args(checkpoint: Option[String] = None, dryRun: Boolean = false, rollback: Boolean = false,
      force: Boolean = false, conf: Seq[(String, String)] = Nil)

  def main(args: Array[String]): Unit = {
    val parsed = parse(args.toList, Args())
    val checkpoint = parsed.checkpoint.getOrElse(fail(Usage))
    val hadoopConf = new Configuration()
    parsed.conf.foreach { case (k, v) => hadoopConf.set(k, v) }
    try emit(Map("report" -> CheckpointMigration.run(checkpoint, parsed.dryRun, parsed.rollback, parsed.force,
          hadoopConf)))
    catch {
      case e: TtlStoreException => fail(e.getMessage)
      case NonFatal(e) => fail(s"migrating $checkpoint failed: $e")
    }
    sys.exit(0)
  }

  @scala.annotation.tailrec
  private def parse(args: List[String], acc: Args): Args = args match {
    case Nil => acc
    case "--dry-run" :: rest => parse(rest, acc.copy(dryRun = true))
    case "--rollback" :: rest => parse(rest, acc.copy(rollback = true))
    case "--force" :: rest => parse(rest, acc.copy(force = true))
    case "--conf" :: setting :: rest => parse(rest, acc.copy(conf = acc.conf :+ ToolLines.hadoopSetting(setting)))
    case flag :: _ if flag.startsWith("--") => fail(Usage)
    case path :: rest if acc.checkpoint.isEmpty => parse(rest, acc.copy(checkpoint = Some(path)))
    case _ => fail(Usage)
  }
}
