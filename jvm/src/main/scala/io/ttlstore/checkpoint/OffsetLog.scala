package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.json4s.{DefaultFormats, Formats, JValue}
import org.json4s.jackson.JsonMethods

/** What Spark's offset log records for one micro-batch: when it was planned, and its watermark. */
final case class BatchTime(timestampMs: Long, watermarkMs: Long)

/**
 * Reads a micro-batch's entry of Spark's offset log, `<checkpoint>/offsets/<batchId>`: a version
 * line (`v1`), then the batch's metadata as JSON (`batchTimestampMs`, `batchWatermarkMs`, ...).
 * Spark writes the entry before the batch runs and reuses it when the batch is replayed, so its
 * timestamp is one time for every partition and every attempt of the batch (Spark's own TTL, in
 * transformWithState, judges by it too). Entries are read once per JVM and kept for a few batches.
 */
object OffsetLog {
  private implicit val formats: Formats = DefaultFormats
  private val Kept = 256
  private val read = new java.util.LinkedHashMap[(String, Long), BatchTime](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[(String, Long), BatchTime]): Boolean = size() > Kept
  }

  /**
   * The time of batch `batchId` of the query whose state lives in `stateRoot` (`<checkpoint>/state`,
   * Spark's `StateStoreId.checkpointRootLocation`); None where there is no such entry (a store
   * driven outside a streaming query) or it cannot be read.
   */
  def batchTime(stateRoot: String, batchId: Long, hadoopConf: Configuration): Option[BatchTime] = {
    val key = (stateRoot, batchId)
    Option(read.synchronized(read.get(key))).orElse {
      val found = readEntry(new Path(new Path(new Path(stateRoot).getParent, "offsets"), batchId.toString), hadoopConf)
      found.foreach(t => read.synchronized(read.put(key, t)))
      found
    }
  }

  /**
   * The JSON document of one of Spark's log files (an offset-log entry, an operator's
   * `_metadata/metadata`): a version line (`v1`), then the document on the next line.
   */
  def jsonAfterVersionLine(fs: FileSystem, file: Path): JValue = versionAndJson(fs, file)._2

  /** A log file of Spark's as its version line (`v1`) and its JSON document (the next line). */
  def versionAndJson(fs: FileSystem, file: Path): (String, JValue) = {
    val in = fs.open(file)
    val lines =
      try IOUtils.toString(in, StandardCharsets.UTF_8).linesIterator.take(2).toVector
      finally in.close()
    require(lines.size == 2, s"$file has no JSON line after its version line")
    (lines.head.trim, JsonMethods.parse(lines(1)))
  }

  /** The numbered entries of one of Spark's directories (`offsets`, `commits`, `state`), ascending; none if absent. */
  def batchIds(fs: FileSystem, dir: Path): Seq[Long] =
    if (!fs.exists(dir)) Nil
    else fs.listStatus(dir).toSeq.map(_.getPath.getName).filter(n => n.nonEmpty && n.forall(_.isDigit))
      .map(_.toLong).sorted

  private def readEntry(path: Path, hadoopConf: Configuration): Option[BatchTime] =
    try {
      val json = jsonAfterVersionLine(path.getFileSystem(hadoopConf), path)
      for {
        ts <- (json \ "batchTimestampMs").extractOpt[Long]
        wm = (json \ "batchWatermarkMs").extractOpt[Long].getOrElse(0L)
      } yield BatchTime(ts, wm)
    } catch {
      case NonFatal(_) => None // no entry (a store outside a query) or one Spark itself could not read
    }
}
