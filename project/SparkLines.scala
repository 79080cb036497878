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

/**
 * What each Spark line has that ttlstore's code and tests ask about: `jvm/spark/<line>.capabilities`,
 * one `key = value` per line of text, the same keys in every file. The build generates
 * `io.ttlstore.spark.LineCapabilities` of a line from its file; tests/conftest.py reads the file of
 * the line under test. The meaning of each key is written here, once.
 */
object Capabilities {

  /** Every key, with what it says about the line, in the files' order. */
  val described: Seq[(String, String)] = Seq(
    "checkpointFormatV2" -> "Spark has checkpoint format v2 (spark.sql.streaming.stateStore.checkpointFormatVersion=2).",
    "stateReader" -> "Spark has the state data source (format(\"statestore\")), which read_state wraps.",
    "operatorMetadata" -> "Spark writes operator metadata (state/<op>/_metadata), which offline repartition reads.",
    "connectServer" -> "The line's pyspark ships a Spark Connect server.",
    "stateReaderReadsFormatV2" -> "Spark's state reader reads a format v2 checkpoint (in a session set to format v2).",
    "stateReaderFollowsTtlstoreIdsInAnySession" ->
      "Spark's state reader passes a format v2 checkpoint's ids whatever the reading session sets.",
    "globalLimitFailsInFormatV2" ->
      "Spark's driver fails a streaming global limit in format v2 (one checkpoint id for its one partition).",
    "restartInOtherCheckpointFormat" ->
      ("A query restarted in the other checkpoint format: none (no format v2), refused (INVALID_LOG_VERSION), " +
        "session (runs in the session's format), pinned (runs on in the commit log's)."),
    "storeStop" ->
      ("How Spark's StateStore.stop() goes with its maintenance running: safe (it stops maintenance before it takes " +
        "the providers' lock); stopMaintenanceFirst (it waits for maintenance holding that lock, which maintenance " +
        "may wait for until the pool's shutdown timeouts, 6 minutes: stop the maintenance task and its pool first)."),
    "checksUnfinishedRepartition" ->
      "Spark refuses to restart a query whose offline repartition is unfinished (STREAMING_UNFINISHED_REPARTITION_DETECTED).",
    "rowChecksums" -> "Spark has row checksums (spark.sql.streaming.stateStore.rowChecksum.enabled).",
    "splitMaintenance" -> "Spark's maintenance calls doSnapshotMaintenance and doCleanupMaintenance apart.",
    "realTimeMode" -> "Spark has Real-Time Mode (trigger(realTime=...)).",
    "encodingFormat" -> "Spark has spark.sql.streaming.stateStore.encodingFormat (unsafeRow or avro).",
    "instanceMetrics" ->
      ("How Spark reports a provider's per-store instance metrics (StateStoreInstanceMetric): none; " +
        "sqlMetricPerPartition (its driver makes one SQL metric per metric, partition and store, which every task " +
        "carries and reports); accumulator (one accumulator gathers them)."),
    "minMemoryOverhead" ->
      "Spark has spark.executor.minMemoryOverhead (before it, an executor's overhead is at least 384 MiB, fixed).")

  /** The keys and values of a line's file, each key of [[described]] exactly once. */
  def read(file: File): Seq[(String, String)] = {
    val pairs = IO.readLines(file).map(_.trim).filterNot(l => l.isEmpty || l.startsWith("#")).map { l =>
      l.split("=", 2).map(_.trim) match {
        case Array(k, v) if k.nonEmpty && v.nonEmpty => k -> v
        case _ => sys.error(s"$file: a line needs `key = value`: '$l'")
      }
    }
    if (pairs.map(_._1) != described.map(_._1)) {
      sys.error(s"$file must name exactly these keys, in this order: ${described.map(_._1).mkString(", ")}")
    }
    pairs
  }

  /** `io.ttlstore.spark.LineCapabilities` of `line`: a Boolean per true/false key, a String otherwise. */
  def scalaSource(line: String, file: File): String = {
    val docs = described.toMap
    val vals = read(file).map { case (k, v) =>
      val value = if (v == "true" || v == "false") s"val $k: Boolean = $v" else s"""val $k: String = "$v""""
      s"  /** ${docs(k)} */\n  $value\n"
    }
    s"""package io.ttlstore.spark
       |
       |/** What Spark $line has that ttlstore asks about: generated by the build from jvm/spark/$line.capabilities. */
       |object LineCapabilities {
       |${vals.mkString("\n")}}
       |""".stripMargin
  }
}
