package io.ttlstore.legacy

import java.io.File

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.ttlstore.checkpoint.VersionChain
import io.ttlstore.errors.AdoptionErrors

/** Where an adopted store's legacy rows come from: the files of one of Spark's providers. */
sealed trait LegacySource {
  def name: String

  /** True if the files hold committed version `version`. */
  def holds(version: Long): Boolean

  /** Replays `version` into `put` and `delete` (keys and values as UnsafeRow bytes). */
  def replay(version: Long, codec: String, workDir: File)(
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int

  /** Deletes the provider's files of this store (once no retained version needs them); returns how many. */
  def deleteFiles(): Int
}

object LegacySource {
  final class Hdfs(files: HdfsProviderFiles) extends LegacySource {
    override def name: String = "hdfs"
    override def holds(version: Long): Boolean = {
      val (deltas, snapshots) = files.versions()
      (deltas.nonEmpty || snapshots.nonEmpty) && files.holds(version)
    }
    override def replay(version: Long, codec: String, workDir: File)(
        put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int =
      files.replay(version, codec)(put, delete)
    override def deleteFiles(): Int = files.deleteAll()
  }

  final class RocksDb(files: RocksDbProviderFiles) extends LegacySource {
    override def name: String = "rocksdb"
    override def holds(version: Long): Boolean = {
      val (zips, changelogs) = files.versions()
      val chain = VersionChain.of(version, zips)
      (chain.snapshot.isDefined || changelogs.contains(1L)) && chain.firstMissing(changelogs.contains).isEmpty
    }
    override def replay(version: Long, codec: String, workDir: File)(
        put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int =
      files.replay(version, codec, workDir)(put, delete)
    override def deleteFiles(): Int = files.deleteAll()
  }

  /** The source named in the adoption record at `recordPath` (named when the name is unknown). */
  def named(name: String, storeDir: Path, hadoopConf: Configuration, recordPath: Path): LegacySource =
    name match {
      case "hdfs" => new Hdfs(new HdfsProviderFiles(storeDir, hadoopConf))
      case "rocksdb" => new RocksDb(new RocksDbProviderFiles(storeDir, hadoopConf))
      case other => throw AdoptionErrors.adoptionRecordCorrupted(recordPath.toString,
          s"it names the provider '$other' (ttlstore reads hdfs and rocksdb)")
    }

  /** The source whose files hold `version` in `storeDir`, if any. */
  def holding(version: Long, storeDir: Path, hadoopConf: Configuration): Option[LegacySource] =
    Seq[LegacySource](new RocksDb(new RocksDbProviderFiles(storeDir, hadoopConf)),
      new Hdfs(new HdfsProviderFiles(storeDir, hadoopConf))).find(_.holds(version))
}
