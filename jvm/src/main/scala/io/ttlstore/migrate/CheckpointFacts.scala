package io.ttlstore.migrate

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.json4s.JValue
import org.json4s.jackson.JsonMethods

import io.ttlstore.checkpoint.SparkCheckpoint
import io.ttlstore.errors.MigrationErrors

/** A stateful operator of a checkpoint, as `migrate` reports it. */
final case class OperatorFacts(id: Long, name: Option[String], stores: Seq[String], partitions: Int)

/**
 * What `migrate` reads of a checkpoint, through Hadoop's FileSystem API (any URI Spark accepts):
 * the batches of its offset and commit logs, an offset-log entry, its stateful operators and the
 * state checkpoint format it runs in.
 */
final class CheckpointFacts(val root: Path, hadoopConf: Configuration) {
  val fs: FileSystem = root.getFileSystem(hadoopConf)
  val offsets: Path = new Path(root, "offsets")
  val commits: Path = new Path(root, "commits")

  def batches(dir: Path): Seq[Long] = if (isDir(dir)) SparkCheckpoint.batchIds(fs, dir) else Nil

  def isDir(p: Path): Boolean = fs.exists(p) && fs.getFileStatus(p).isDirectory

  def readText(file: Path): String = {
    val in = fs.open(file)
    try IOUtils.toString(in, StandardCharsets.UTF_8)
    finally in.close()
  }

  /** An offset-log entry: its lines, and its metadata (the second line) as JSON. */
  def entry(file: Path): (Vector[String], JValue) = {
    val lines = readText(file).split("\n", -1).toVector
    if (lines.size < 2 || !lines.head.startsWith("v")) {
      throw MigrationErrors.offsetLogUnreadable(file.toString, "no version line")
    }
    val json =
      try JsonMethods.parse(lines(1))
      catch {
        case NonFatal(e) =>
          throw MigrationErrors.offsetLogUnreadable(file.toString, s"its metadata line is not JSON ($e)")
      }
    (lines, json)
  }

  /** The stateful operators below `state/`: names and stores from Spark's operator metadata. */
  def operators(): Seq[OperatorFacts] = {
    val state = new Path(root, "state")
    batches(state).map { op =>
      val dir = new Path(state, op.toString)
      val meta =
        try SparkCheckpoint.operatorMetadata(fs, dir)
        catch { case NonFatal(_) => None }
      val (name, stores) = (meta.flatMap(_.name), meta.toSeq.flatMap(_.stores.map(_.name)))
      val transformWithState = fs.exists(new Path(dir, "_metadata/v2")) || fs.exists(new Path(dir, "_stateSchema"))
      OperatorFacts(op, name.orElse(if (transformWithState) Some("transformWithState") else None), stores,
        batches(dir).size)
    }
  }

  /** The state checkpoint format the query runs in (see [[SparkCheckpoint.formatVersion]]). */
  def checkpointFormat(): Int = SparkCheckpoint.formatVersion(fs, root)

  /** The directories of ttlstore's own files below `state/` (a store that ran on ttlstore). */
  def ttlstoreStores(): Seq[String] =
    Seq("state/*/*/ttlstore", "state/*/*/*/ttlstore").flatMap { pattern =>
      Option(fs.globStatus(new Path(root, pattern))).toSeq.flatten.filter(_.isDirectory)
        .map(s => root.toUri.relativize(s.getPath.toUri).getPath)
    }.sorted
}
