package io.ttlstore

import java.io.{DataInputStream, EOFException, FileNotFoundException, IOException}

import scala.collection.immutable.SortedSet
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager

/**
 * The files Spark's HDFS provider (`HDFSBackedStateStoreProvider`) wrote for one store, read
 * without changing them: the first source of an adopted checkpoint's legacy rows.
 *
 * {{{
 *   <store dir>/<v>.delta      the changes of version v
 *   <store dir>/<v>.snapshot   every row of version v (written by maintenance, some versions only)
 *   file   := compressed with spark.sql.streaming.stateStore.compression.codec ( record* end )
 *   record := keySize int32 | key (UnsafeRow bytes) | valueSize int32 | value (UnsafeRow bytes)
 *           | keySize int32 | key | -1                     (a delete, in deltas)
 *   end    := -1
 * }}}
 * Integers are big-endian. Version v is the newest snapshot at or below v plus the deltas after it.
 */
final class HdfsProviderFiles(val storeDir: Path, hadoopConf: Configuration) {
  private lazy val fm = CheckpointFileManager.create(storeDir, hadoopConf)

  def deltaPath(version: Long): Path = new Path(storeDir, s"$version.delta")
  def snapshotPath(version: Long): Path = new Path(storeDir, s"$version.snapshot")

  /** The versions with a delta file and with a snapshot file. */
  def versions(): (SortedSet[Long], SortedSet[Long]) = {
    val names = if (fm.exists(storeDir)) fm.list(storeDir).toSeq.filter(_.isFile).map(_.getPath.getName) else Nil
    def numbered(suffix: String) =
      SortedSet(names.filter(_.endsWith(suffix)).flatMap(n => Try(n.stripSuffix(suffix).toLong).toOption): _*)
    (numbered(".delta"), numbered(".snapshot"))
  }

  /** True if these files hold version `version` (a snapshot, or deltas back to one or to the start). */
  def holds(version: Long): Boolean = {
    val (deltas, snapshots) = versions()
    val base = snapshots.rangeTo(version).lastOption.getOrElse(0L)
    version == 0 || ((base + 1) to version).forall(deltas.contains)
  }

  /**
   * Replays version `version` into `put` and `delete`: the newest snapshot at or below it, then
   * each delta after it, in order. Returns the files read. Fails naming the first missing or
   * damaged file.
   */
  def replay(version: Long, codecName: String)(
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int = {
    val (deltas, snapshots) = versions()
    val base = snapshots.rangeTo(version).lastOption
    val missing = ((base.getOrElse(0L) + 1) to version).find(v => !deltas.contains(v))
    missing.foreach { v => throw TtlStoreErrors.legacyFileMissing(deltaPath(v).toString, v, version) }
    base.foreach(v => read(snapshotPath(v), v, codecName, put, delete))
    ((base.getOrElse(0L) + 1) to version).foreach(v => read(deltaPath(v), v, codecName, put, delete))
    base.size + (version - base.getOrElse(0L)).toInt
  }

  private def read(path: Path, version: Long, codecName: String,
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Unit = {
    val raw =
      try fm.open(path)
      catch { case _: FileNotFoundException => throw TtlStoreErrors.legacyFileMissing(path.toString, version, version) }
    val in = new DataInputStream(Changelog.codec(codecName).compressedInputStream(raw))
    def damaged(why: String) = TtlStoreErrors.legacyFileCorrupted(path.toString, version, why)
    try {
      var done = false
      while (!done) {
        val keySize = in.readInt()
        if (keySize == -1) done = true
        else {
          if (keySize < 0) throw damaged(s"a key size of $keySize")
          val key = new Array[Byte](keySize)
          in.readFully(key)
          val valueSize = in.readInt()
          if (valueSize == -1) delete(key)
          else if (valueSize < 0) throw damaged(s"a value size of $valueSize")
          else {
            val value = new Array[Byte](valueSize)
            in.readFully(value)
            put(key, value)
          }
        }
      }
    } catch {
      case _: EOFException => throw damaged("it ends before its end marker")
      case e: IOException => throw damaged(s"unreadable: ${e.getMessage}")
    } finally in.close()
  }
}
