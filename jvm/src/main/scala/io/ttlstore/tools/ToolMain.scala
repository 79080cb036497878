package io.ttlstore.tools

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.ttlstore.errors.TtlStoreException
import io.ttlstore.spark.BuiltFor
import io.ttlstore.tools.ToolLines.fail

/** What an offline tool was asked: the checkpoint, its flags and options, and the Hadoop settings. */
final case class ToolArgs(checkpoint: String, flags: Set[String], options: Map[String, String],
    hadoopConf: Configuration) {
  def flag(name: String): Boolean = flags.contains(name)
}

/**
 * The skeleton of every offline tool (`InspectMain`, `MigrateMain`, `RepartitionMain`): parse
 * `CHECKPOINT [--flag]... [--option VALUE]... [--conf KEY=VALUE]...`, check that the Spark on the
 * class path is of this jar's line, run the work, and end the JVM: exit code 0 after it, or an
 * `{"error": ...}` line ([[ToolLines]]) and exit code 2 when it fails.
 */
object ToolMain {

  /**
   * Runs `work` on `args`. `flags` and `options` are the names (with their `--`) the tool takes;
   * `doing` names the work in the message of an unexpected failure ("reading", "migrating").
   */
  def run(usage: String, flags: Set[String], options: Set[String], doing: String, args: Array[String])(
      work: ToolArgs => Unit): Nothing = {
    val parsed = parse(args.toList, usage, flags, options, ToolArgs("", Set.empty, Map.empty, new Configuration()))
    if (parsed.checkpoint.isEmpty) fail(usage)
    try {
      BuiltFor.check()
      work(parsed)
    } catch {
      case e: TtlStoreException => fail(e.getMessage)
      case NonFatal(e) => fail(s"$doing ${parsed.checkpoint} failed: $e")
    }
    System.out.flush()
    sys.exit(0)
  }

  @scala.annotation.tailrec
  private def parse(args: List[String], usage: String, flags: Set[String], options: Set[String],
      acc: ToolArgs): ToolArgs = args match {
    case Nil => acc
    case "--conf" :: setting :: rest =>
      val (key, value) = ToolLines.hadoopSetting(setting)
      acc.hadoopConf.set(key, value)
      parse(rest, usage, flags, options, acc)
    case flag :: rest if flags.contains(flag) => parse(rest, usage, flags, options, acc.copy(flags = acc.flags + flag))
    case option :: value :: rest if options.contains(option) =>
      parse(rest, usage, flags, options, acc.copy(options = acc.options + (option -> value)))
    case arg :: _ if arg.startsWith("--") => fail(usage)
    case path :: rest if acc.checkpoint.isEmpty => parse(rest, usage, flags, options, acc.copy(checkpoint = path))
    case _ => fail(usage)
  }
}
