package io.ttlstore.checkpoint

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.json4s.{DefaultFormats, Formats}

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

  private def readEntry(path: Path, hadoopConf: Configuration): Option[BatchTime] =
    try {
      val json = SparkCheckpoint.jsonAfterVersionLine(path.getFileSystem(hadoopConf), path)
      for {
        ts <- (json \ "batchTimestampMs").extractOpt[Long]
        wm = (json \ "batchWatermarkMs").extractOpt[Long].getOrElse(0L)
      } yield BatchTime(ts, wm)
    } catch {
      case NonFatal(_) => None // no entry (a store outside a query) or one Spark itself could not read
    }
}
