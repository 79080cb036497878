package io.ttlstore

import java.io.File
import java.nio.charset.StandardCharsets

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager
import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.Serialization

/**
 * A store's adoption of the state Spark's own provider left (KIP-258): version `version` of the
 * `provider`'s files (`hdfs` or `rocksdb`, read with `codec`) is the store's base, held as legacy
 * rows until they are upgraded. Written as `ttlstore/adopted.json` by the first commit after the
 * adoption, so that every later load finds the same base; Spark's files are never changed.
 */
final case class AdoptionRecord(provider: String, version: Long, codec: String, adoptedAtMs: Long)

object AdoptionRecord {
  private implicit val formats: Formats = DefaultFormats
  val FileName = "adopted.json"

  def fromJson(json: String): AdoptionRecord = Serialization.read[AdoptionRecord](json)
  def toJson(r: AdoptionRecord): String = Serialization.write(r)
}

/** How TTL stamps legacy rows, which carry no timestamp (`legacyRowTimestamp`). */
sealed abstract class LegacyRowTimestamp(val name: String) extends Named

object LegacyRowTimestamp {
  case object Migration extends LegacyRowTimestamp("migration")
  case object Unknown extends LegacyRowTimestamp("unknown")
  case object Expired extends LegacyRowTimestamp("expired")
  val all: Seq[LegacyRowTimestamp] = Seq(Migration, Unknown, Expired)

  /**
   * The timestamp legacy rows are judged by, and keep when upgraded. Pure. `migration` is the
   * adoption's processing time; in event time rows have no event time yet, so it is `unknown`.
   * Long.MaxValue never expires (the expiry rule saturates); Long.MinValue is always expired.
   */
  def stamp(policy: LegacyRowTimestamp, adoptedAtMs: Long, time: TimeCharacteristic): Long = policy match {
    case Migration if time == TimeCharacteristic.ProcessingTime => adoptedAtMs
    case Migration | Unknown => Long.MaxValue
    case Expired => Long.MinValue
  }
}

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
      val base = zips.rangeTo(version).lastOption
      (base.isDefined || changelogs.contains(1L)) &&
        ((base.getOrElse(0L) + 1) to version).forall(changelogs.contains)
    }
    override def replay(version: Long, codec: String, workDir: File)(
        put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int =
      files.replay(version, codec, workDir)(put, delete)
    override def deleteFiles(): Int = files.deleteAll()
  }

  /**
   * A legacy key as this store encodes keys (`codec`, over `keyFields` key columns). Spark's HDFS
   * provider stores whole key rows; its RocksDB provider prefixes an encoding byte, and lays out
   * prefix-scan keys as prefix and remainder (see [[RocksDbProviderFiles]]).
   */
  def keyEncoder(codec: KeyCodec, keyFields: Int): (String, Array[Byte]) => Array[Byte] = codec match {
    case _: PrefixKeyCodec => (provider, raw) =>
      if (provider == "rocksdb") {
        val (prefix, rest) = RocksDbProviderFiles.prefixKey(raw)
        java.nio.ByteBuffer.allocate(4 + prefix.length + rest.length).putInt(prefix.length).put(prefix).put(rest)
          .array()
      } else codec.encode(KeyCodec.rowAt(keyFields, raw, 0, raw.length))
    case _ => (provider, raw) => if (provider == "rocksdb") RocksDbProviderFiles.wholeKey(raw) else raw
  }

  /** The source named in an adoption record. */
  def named(name: String, storeDir: Path, hadoopConf: Configuration): LegacySource = name match {
    case "hdfs" => new Hdfs(new HdfsProviderFiles(storeDir, hadoopConf))
    case "rocksdb" => new RocksDb(new RocksDbProviderFiles(storeDir, hadoopConf))
    case other => throw TtlStoreErrors.legacyFileCorrupted(
      new Path(storeDir, s"${CheckpointFiles.DirName}/${AdoptionRecord.FileName}").toString, -1,
      s"it names the provider '$other' (ttlstore reads hdfs and rocksdb)")
  }

  /** The source whose files hold `version` in `storeDir`, if any. */
  def holding(version: Long, storeDir: Path, hadoopConf: Configuration): Option[LegacySource] =
    Seq[LegacySource](new RocksDb(new RocksDbProviderFiles(storeDir, hadoopConf)),
      new Hdfs(new HdfsProviderFiles(storeDir, hadoopConf))).find(_.holds(version))
}

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
