package io.ttlstore.checkpoint

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.json4s.{JArray, JString}

/**
 * Reads the checkpoint ids Spark's commit log gives the stores under checkpoint format v2: entry
 * `<checkpoint>/commits/<batchId>` (version line `v2`) holds `stateUniqueIds`, per operator id an
 * array over partitions of the ids of each of the partition's stores, the ids of the versions that
 * batch committed (version `batchId + 1`). A stream-stream join has four stores per partition, in
 * Spark's order ([[JoinStores]]); every other operator one.
 */
object CommitLog {

  /** The stores of a stream-stream join, in the order Spark lists their ids. */
  val JoinStores: Seq[String] =
    Seq("left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue")

  /**
   * The checkpoint id under which batch `batchId` committed the store, if the commit log entry
   * exists and names one (None in format v1, or for a batch not committed).
   */
  def checkpointId(checkpoint: Path, batchId: Long, operatorId: Long, partition: Int, storeName: String,
      hadoopConf: Configuration): Option[String] =
    try {
      val file = new Path(new Path(checkpoint, "commits"), batchId.toString)
      val fs = file.getFileSystem(hadoopConf)
      if (!fs.exists(file)) None
      else {
        val json = SparkCheckpoint.jsonAfterVersionLine(fs, file)
        (json \ "stateUniqueIds" \ operatorId.toString) match {
          case JArray(partitions) if partition < partitions.size =>
            val ids = partitions(partition).children.collect { case JString(s) => s }
            val index = if (ids.size == 1) 0 else JoinStores.indexOf(storeName)
            ids.lift(index).filter(FileNames.isCheckpointId)
          case _ => None
        }
      }
    } catch { case NonFatal(_) => None }
}
