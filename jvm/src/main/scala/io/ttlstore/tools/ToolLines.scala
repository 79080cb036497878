package io.ttlstore.tools

import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization

/**
 * What the offline tools ([[ToolMain]]) share: they answer the Python CLI
 * in JSON lines on stdout, end with `{"error": ...}` and exit code 2 when they cannot go on, and
 * take Hadoop settings as `--conf KEY=VALUE`.
 */
object ToolLines {
  private implicit val formats: Formats = DefaultFormats

  def emit(line: Map[String, Any]): Unit = {
    System.out.println(Serialization.write(line))
    System.out.flush()
  }

  def fail(message: String): Nothing = {
    emit(Map("error" -> message))
    sys.exit(2)
  }

  /** A `--conf` value as a Hadoop setting: `spark.hadoop.` is taken off, as Spark does. */
  def hadoopSetting(setting: String): (String, String) = setting.split("=", 2) match {
    case Array(key, value) if key.nonEmpty => key.stripPrefix("spark.hadoop.") -> value
    case _ => fail(s"--conf takes KEY=VALUE, got '$setting'")
  }
}
