package io.ttlstore.checkpoint

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.ttlstore.errors.AdoptionErrors
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * Reads and writes `ttlstore/adopted.json` of one store; written through `createAtomic`, the store's
 * way of publishing a file ([[CheckpointFiles.createAtomic]]).
 */
final class AdoptionFile(root: Path, hadoopConf: Configuration, createAtomic: Path => AtomicOutput) {
  private lazy val fm = CheckpointFileManager.create(root, hadoopConf)
  val path: Path = new Path(root, AdoptionRecord.FileName)

  /** The record, if the store has one; a file that does not parse as one fails naming it. */
  def read(): Option[AdoptionRecord] =
    if (!fm.exists(path)) None
    else {
      val in = CheckpointReads.open(fm, path)
      val text =
        try IOUtils.toString(in, StandardCharsets.UTF_8)
        finally in.close()
      val record =
        try AdoptionRecord.fromJson(text)
        catch { case NonFatal(e) => throw AdoptionErrors.adoptionRecordCorrupted(path.toString, e.getMessage) }
      AdoptionRecord.problem(record).foreach(why => throw AdoptionErrors.adoptionRecordCorrupted(path.toString, why))
      Some(record)
    }

  def write(record: AdoptionRecord): Unit = {
    val out = createAtomic(path)
    try {
      out.stream.write(AdoptionRecord.toJson(record).getBytes(StandardCharsets.UTF_8))
      out.stream.close()
    } catch { case e: Throwable => out.cancel(); throw e }
  }
}
