package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager

/**
 * Reads and writes `ttlstore/adopted.json` of one store; written through `createAtomic`, the store's
 * way of publishing a file ([[CheckpointFiles.createAtomic]]).
 */
final class AdoptionFile(root: Path, hadoopConf: Configuration, createAtomic: Path => AtomicOutput) {
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
    val out = createAtomic(path)
    try {
      out.stream.write(AdoptionRecord.toJson(record).getBytes(StandardCharsets.UTF_8))
      out.stream.close()
    } catch { case e: Throwable => out.cancel(); throw e }
  }
}
