package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager

/** Reads and writes `ttlstore/adopted.json` of one store. */
final class AdoptionFile(root: Path, hadoopConf: Configuration) {
  private lazy val fm = CheckpointFileManager.create(root, hadoopConf)
  val path: Path = new Path(root, AdoptionRecord.FileName)

  def read(): Option[AdoptionRecord] =
    if (!fm.exists(path)) None
    else {
      val in = fm.open(path)
      try Some(AdoptionRecord.fromJson(IOUtils.toString(in, StandardCharsets.UTF_8)))
      finally in.close()
    }

  def write(record: AdoptionRecord): Unit = {
    fm.mkdirs(root)
    val out = fm.createAtomic(path, overwriteIfPossible = true)
    try {
      out.write(AdoptionRecord.toJson(record).getBytes(StandardCharsets.UTF_8))
      out.close()
    } catch { case e: Throwable => out.cancel(); throw e }
  }
}
