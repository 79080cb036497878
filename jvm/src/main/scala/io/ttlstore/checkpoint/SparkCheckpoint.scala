package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.commons.io.IOUtils
import org.apache.hadoop.fs.{FileSystem, Path}
import org.json4s.{DefaultFormats, Formats, JNothing, JValue}
import org.json4s.jackson.JsonMethods

/** One store of a stateful operator, as Spark's operator metadata lists it. */
final case class StoreMetadata(name: String, numColsPrefixKey: Int)

/** A stateful operator's metadata as Spark writes it (`state/<op>/_metadata/metadata`). */
final case class OperatorMetadata(version: String, name: Option[String], stores: Seq[StoreMetadata])

/**
 * Spark's own files in a query's checkpoint, read in one place: its log files (offset-log and
 * commit-log entries, operator metadata: a version line, then a JSON document), their numbered
 * entries, the operators' metadata, and the state checkpoint format the query runs in. `migrate`,
 * `inspect`, `repartition` and the stores read them through this object.
 */
object SparkCheckpoint {
  private implicit val formats: Formats = DefaultFormats

  /** A log file of Spark's as its version line (`v1`) and its JSON document (the next line). */
  def versionAndJson(fs: FileSystem, file: Path): (String, JValue) = {
    val in = fs.open(file)
    val lines =
      try IOUtils.toString(in, StandardCharsets.UTF_8).linesIterator.take(2).toVector
      finally in.close()
    require(lines.size == 2, s"$file has no JSON line after its version line")
    (lines.head.trim, JsonMethods.parse(lines(1)))
  }

  /** The JSON document of one of Spark's log files. */
  def jsonAfterVersionLine(fs: FileSystem, file: Path): JValue = versionAndJson(fs, file)._2

  /** The numbered entries of one of Spark's directories (`offsets`, `commits`, `state`), ascending; none if absent. */
  def batchIds(fs: FileSystem, dir: Path): Seq[Long] =
    if (!fs.exists(dir)) Nil
    else fs.listStatus(dir).toSeq.map(_.getPath.getName).filter(n => n.nonEmpty && n.forall(_.isDigit))
      .map(_.toLong).sorted

  /** The metadata file of the operator whose state lives in `operatorDir` (`state/<op>`). */
  def operatorMetadataFile(operatorDir: Path): Path = new Path(operatorDir, "_metadata/metadata")

  /**
   * The metadata of the operator whose state lives in `operatorDir`; None where Spark wrote none.
   * Throws where the file cannot be read.
   */
  def operatorMetadata(fs: FileSystem, operatorDir: Path): Option[OperatorMetadata] = {
    val file = operatorMetadataFile(operatorDir)
    if (!fs.exists(file) || !fs.getFileStatus(file).isFile) None
    else {
      val (version, json) = versionAndJson(fs, file)
      val stores = (json \ "stateStoreInfo").children.flatMap { info =>
        (info \ "storeName").extractOpt[String].map(StoreMetadata(_,
            (info \ "numColsPrefixKey").extractOpt[Int].getOrElse(0)))
      }
      Some(OperatorMetadata(version, (json \ "operatorInfo" \ "operatorName").extractOpt[String], stores))
    }
  }

  /**
   * The state checkpoint format the query under `root` runs in: 2 when its last commit-log entry
   * names checkpoint ids. Spark keeps the format a checkpoint started with and records it in the
   * commit log (a `v2` entry with `stateUniqueIds`), not in the offset log.
   */
  def formatVersion(fs: FileSystem, root: Path): Int = {
    val commits = new Path(root, "commits")
    batchIds(fs, commits).lastOption match {
      case None => 1
      case Some(last) =>
        try {
          val (version, json) = versionAndJson(fs, new Path(commits, last.toString))
          if (version == "v2" || (json \ "stateUniqueIds") != JNothing) 2 else 1
        } catch { case NonFatal(_) => 1 }
    }
  }
}
