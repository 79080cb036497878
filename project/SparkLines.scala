import java.io.File

import sbt._

/**
 * A row of jvm/spark/lines.tsv: a Spark line, its latest and oldest releases, the Scala version one
 * artifact of it is built with, and where that build's Spark jars come from: the line's pyspark
 * release (`pyspark`), or Maven Central for a Scala version no pyspark ships (`maven`: Spark 3.5 for
 * Scala 2.13).
 */
final case class SparkLine(line: String, latest: String, oldest: String, scala: String, jars: String) {

  /** "2.13" of "2.13.16": the artifact's suffix. */
  def scalaBinary: String = scala.split('.').take(2).mkString(".")

  /** Whether the line's pyspark release ships this build's Scala (its jars then come from it). */
  def fromPyspark: Boolean = jars == "pyspark"

  /** The build's name in .build/spark-<key> and the Makefile: the line, with its Scala where no pyspark ships it. */
  def key: String = if (fromPyspark) line else s"${line}_$scalaBinary"

  /** The sbt project's id: spark40, spark43, spark35_213, ... */
  def id: String = "spark" + key.replace(".", "")

  /** The artifact's name before its Scala suffix, the ecosystem's way (iceberg-spark-runtime-3.5_2.12). */
  def name: String = s"ttlstore-spark-$line"
}

/** The Spark lines table, and which adapter directories of jvm/spark/ each line compiles. */
object SparkLines {

  def read(table: File): Seq[SparkLine] =
    IO.readLines(table).map(_.trim).filterNot(l => l.isEmpty || l.startsWith("#")).map { l =>
      l.split("\\s+") match {
        case Array(line, latest, oldest, scala, jars @ ("pyspark" | "maven")) =>
          SparkLine(line, latest, oldest, scala, jars)
        case _ => sys.error(s"$table: a row needs line, latest, oldest, scala and jars (pyspark or maven): '$l'")
      }
    }

  /** A line as a number that orders (4.1 -> 401). */
  def number(line: String): Int = line.split('.') match {
    case Array(major, minor) => major.toInt * 100 + minor.toInt
    case _ => sys.error(s"not a Spark line: '$line'")
  }

  /** Whether an adapter directory's name ("4.0", "4.1+", "4.0-4.2") covers `line`. */
  def covers(range: String, line: String): Boolean = {
    val n = number(line)
    if (range.endsWith("+")) n >= number(range.stripSuffix("+"))
    else range.split('-') match {
      case Array(from, to) => number(from) <= n && n <= number(to)
      case _ => n == number(range)
    }
  }

  /** The adapter directories of `adapters` (jvm/spark/) whose name covers `line`. */
  def adapterDirs(adapters: File, line: String): Seq[File] =
    (adapters * DirectoryFilter).get.filter(d => covers(d.getName, line)).sortBy(_.getName)
}
