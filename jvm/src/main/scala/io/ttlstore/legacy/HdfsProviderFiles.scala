package io.ttlstore.legacy

import scala.collection.immutable.SortedSet

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.ttlstore.checkpoint.VersionChain
import io.ttlstore.errors.AdoptionErrors
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * The files Spark's HDFS provider (`HDFSBackedStateStoreProvider`) wrote for one store, read
 * without changing them: the first source of an adopted checkpoint's legacy rows.
 *
 * {{{
 *   <store dir>/<v>.delta      the changes of version v
 *   <store dir>/<v>.snapshot   every row of version v (written by maintenance, some versions only)
 * }}}
 * Both are [[SparkProviderFormat]] record files of UnsafeRow keys and values. Version v is the newest snapshot at or below v plus the deltas after it.
 */
final class HdfsProviderFiles(val storeDir: Path, hadoopConf: Configuration) {
  private lazy val fm = CheckpointFileManager.create(storeDir, hadoopConf)

  def deltaPath(version: Long): Path = new Path(storeDir, s"$version.delta")
  def snapshotPath(version: Long): Path = new Path(storeDir, s"$version.snapshot")

  /** The versions with a delta file and with a snapshot file. */
  def versions(): (SortedSet[Long], SortedSet[Long]) =
    SparkProviderFormat.versions(fm, storeDir, ".delta", ".snapshot")

  /** Deletes every delta and snapshot file of the store. */
  def deleteAll(): Int = SparkProviderFormat.deleteAll(fm, storeDir, Seq(".delta", ".snapshot"), Nil)

  /** True if these files hold version `version` (a snapshot, or deltas back to one or to the start). */
  def holds(version: Long): Boolean = {
    val (deltas, snapshots) = versions()
    VersionChain.of(version, snapshots).firstMissing(deltas.contains).isEmpty
  }

  /**
   * Replays version `version` into `put` and `delete`: the newest snapshot at or below it, then
   * each delta after it, in order. Returns the files read. Fails naming the first missing or
   * damaged file.
   */
  def replay(version: Long, codecName: String)(
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int = {
    val (deltas, snapshots) = versions()
    val chain = VersionChain.of(version, snapshots)
    chain.firstMissing(deltas.contains).foreach { v =>
      throw AdoptionErrors.legacyFileMissing(deltaPath(v).toString, v, version)
    }
    chain.snapshot.foreach(v => SparkProviderFormat.readRecords(fm, snapshotPath(v), v, codecName)(put, delete))
    chain.changes.foreach { v =>
      SparkProviderFormat.readRecords(fm, deltaPath(v), v, codecName)(put, delete)
    }
    chain.files
  }
}
