package io.ttlstore.legacy

import java.io.{DataInputStream, EOFException, FileNotFoundException, IOException}

import scala.collection.immutable.SortedSet
import scala.util.Try

import org.apache.hadoop.fs.Path

import io.ttlstore.checkpoint.{CheckpointReads, Compression, Streams}
import io.ttlstore.errors.{AdoptionErrors, TtlStoreException}
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * What Spark's HDFS and RocksDB providers share in their files: versions named `<v>.<suffix>`, and
 * one record stream for HDFS deltas and snapshots and RocksDB changelogs (format 1):
 * {{{
 *   file   := compressed with the store's codec ( record* end )
 *   record := keySize int32 | key | valueSize int32 | value   (a put)
 *           | keySize int32 | key | -1                        (a delete)
 *   end    := -1
 * }}}
 */
object SparkProviderFormat {

  /** The versions of the files named `<v><first>` and `<v><second>` in `dir`. */
  def versions(
      fm: CheckpointFileManager, dir: Path, first: String, second: String): (SortedSet[Long], SortedSet[Long]) = {
    val names = if (fm.exists(dir)) fm.list(dir).toSeq.filter(_.isFile).map(_.getPath.getName) else Nil
    def numbered(suffix: String) =
      SortedSet(names.filter(_.endsWith(suffix)).flatMap(n => Try(n.stripSuffix(suffix).toLong).toOption): _*)
    (numbered(first), numbered(second))
  }

  /**
   * Deletes the files named `<v><suffix>` for the suffixes, and the directories `dirs`, directly in
   * `dir` (never other stores' subdirectories or ttlstore's own); returns how many entries went.
   */
  def deleteAll(fm: CheckpointFileManager, dir: Path, suffixes: Seq[String], dirs: Seq[String]): Int = {
    val listed = if (fm.exists(dir)) fm.list(dir).toSeq else Nil
    val doomed = listed.filter { s =>
      val name = s.getPath.getName
      if (s.isDirectory) dirs.contains(name)
      else suffixes.exists(x => name.endsWith(x) && Try(name.stripSuffix(x).toLong).isSuccess)
    }
    doomed.foreach(s => fm.delete(s.getPath))
    doomed.size
  }

  /**
   * Reads the record file `path` of `version` into `put` and `delete`, failing with the file named
   * when it is missing, cut short or damaged.
   */
  def readRecords(fm: CheckpointFileManager, path: Path, version: Long, codecName: String)(
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Unit = {
    val raw =
      try CheckpointReads.open(fm, path)
      catch { case _: FileNotFoundException => throw AdoptionErrors.legacyFileMissing(path.toString, version, version) }
    def damaged(why: String) = AdoptionErrors.legacyFileCorrupted(path.toString, version, why)
    val in =
      try new DataInputStream(Compression.inputStream(codecName, raw))
      catch { case e: IOException => raw.close(); throw damaged(s"unreadable: ${e.getMessage}") }
    try {
      var done = false
      while (!done) {
        val keySize = in.readInt()
        if (keySize == -1) done = true
        else {
          if (keySize < 0) throw damaged(s"a key size of $keySize")
          val key = Streams.readExactly(in, keySize)
          val valueSize = in.readInt()
          if (valueSize == -1) delete(key)
          else if (valueSize < 0) throw damaged(s"a value size of $valueSize")
          else {
            val value = Streams.readExactly(in, valueSize)
            put(key, value)
          }
        }
      }
    } catch {
      case e: TtlStoreException if e.errorName == "LEGACY_KEY_MALFORMED" => throw damaged(e.getMessage)
      case e: TtlStoreException => throw e
      case _: EOFException => throw damaged("it ends before its end marker")
      case e: IOException => throw damaged(s"unreadable: ${e.getMessage}")
    } finally in.close()
  }
}
