package io.ttlstore.legacy

import java.io.{File, FileNotFoundException, FileOutputStream}
import java.nio.charset.StandardCharsets
import java.util.zip.ZipInputStream

import scala.collection.immutable.SortedSet
import scala.util.control.NonFatal

import org.apache.commons.io.{FileUtils, IOUtils}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.json4s.{DefaultFormats, Formats}
import org.json4s.jackson.JsonMethods
import org.rocksdb.{Options, RocksDB, RocksDBException}

import io.ttlstore.bytes.Bytes
import io.ttlstore.checkpoint.{CheckpointReads, FileNames, VersionChain}
import io.ttlstore.errors.{AdoptionErrors, DiskFull, TtlStoreException}
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/**
 * The files Spark's RocksDB provider (`RocksDBStateStoreProvider`, checkpoint format 1) wrote for one
 * store of a classic operator, read without changing them: a source of an adopted checkpoint's
 * legacy rows.
 *
 * {{{
 *   <store dir>/<v>.zip         snapshot of version v: "metadata" ("v1" or "v2" line + JSON naming
 *                               the SSTs; see [[RocksDbProviderFiles.MetadataVersions]])
 *                               and the DB's small files (MANIFEST, CURRENT, OPTIONS, logs)
 *   <store dir>/SSTs/<n>-<uuid>.sst   SST files shared by snapshots
 *   <store dir>/<v>.changelog   changes of version v (changelog checkpointing): a
 *                               [[SparkProviderFormat]] record file (changelog format 1)
 *   value      := encoding version byte (0) | UnsafeRow bytes
 *   key        := encoding version byte (0) | UnsafeRow bytes                  (whole keys)
 *              | prefixLen int32 little-endian | 0 | prefix row | 0 | rest of the key row
 *                                  (prefix-scan keys; prefixLen counts its version byte)
 * }}}
 * Version v is the newest snapshot at or below v plus the changelogs after it.
 */
final class RocksDbProviderFiles(val storeDir: Path, hadoopConf: Configuration) {
  import RocksDbProviderFiles._

  private lazy val fm = CheckpointFileManager.create(storeDir, hadoopConf)

  def zipPath(version: Long): Path = new Path(storeDir, s"$version.zip")
  def changelogPath(version: Long): Path = new Path(storeDir, s"$version.changelog")
  def sstPath(dfsName: String): Path = new Path(storeDir, s"SSTs/$dfsName")

  /** The versions with a snapshot (zip) and with a changelog. */
  def versions(): (SortedSet[Long], SortedSet[Long]) =
    SparkProviderFormat.versions(fm, storeDir, ".zip", ".changelog")

  /** Deletes every snapshot, changelog, shared SST and log file of the store. */
  def deleteAll(): Int =
    SparkProviderFormat.deleteAll(fm, storeDir, Seq(".zip", ".changelog"), Seq("SSTs", "logs"))

  /**
   * Replays version `version` into `put` and `delete`: keys as Spark encoded them (see
   * [[RocksDbProviderFiles.wholeKey]], [[RocksDbProviderFiles.prefixKey]]), values as UnsafeRow bytes
   * (Spark's encoding byte removed): the rows of the newest snapshot at or below it, opened read-only in a
   * directory under `workDir` that is deleted afterwards, then each changelog after it. Returns
   * the files read. Fails naming the first missing or damaged file.
   */
  def replay(version: Long, codecName: String, workDir: File)(
      put: (Array[Byte], Array[Byte]) => Unit, delete: Array[Byte] => Unit): Int = {
    val (zips, changelogs) = versions()
    val chain = VersionChain.of(version, zips)
    chain.firstMissing(changelogs.contains).foreach { v =>
      throw AdoptionErrors.legacyFileMissing(
        (if (chain.snapshot.isEmpty && changelogs.isEmpty) zipPath(version) else changelogPath(v)).toString, v, version)
    }
    chain.snapshot.foreach(v => readSnapshot(v, workDir, put))
    chain.changes.foreach { v =>
      val path = changelogPath(v)
      SparkProviderFormat.readRecords(fm, path, v, codecName)(
        (k, value) => naming(path, v)(put(k, decoded(value, path, v))), k => naming(path, v)(delete(k)))
    }
    chain.files
  }

  private def readSnapshot(version: Long, workDir: File, put: (Array[Byte], Array[Byte]) => Unit): Unit = {
    val dir = new File(workDir, s"spark-rocksdb-$version-${java.util.UUID.randomUUID()}")
    dir.mkdirs()
    try {
      val metadata = unzip(version, dir)
      metadata.sstFiles.foreach { sst =>
        val in =
          try CheckpointReads.open(fm, sstPath(sst.dfsSstFileName))
          catch {
            case _: FileNotFoundException =>
              throw AdoptionErrors.legacyFileMissing(sstPath(sst.dfsSstFileName).toString, version, version)
          }
        val out = new FileOutputStream(new File(dir, sst.localFileName))
        try IOUtils.copy(in, out)
        finally { in.close(); out.close() }
      }
      val options = new Options()
      val db =
        try RocksDB.openReadOnly(options, dir.getAbsolutePath)
        catch {
          case e: RocksDBException =>
            options.close()
            throw AdoptionErrors.legacyFileCorrupted(zipPath(version).toString, version, e.getMessage)
        }
      try {
        val it = db.newIterator()
        try {
          it.seekToFirst()
          while (it.isValid) {
            naming(zipPath(version), version)(put(it.key(), decoded(it.value(), zipPath(version), version)))
            it.next()
          }
          // An iteration that failed to read ends as if the rows ran out: its status says which.
          try it.status()
          catch {
            case e: RocksDBException =>
              throw AdoptionErrors.legacyFileCorrupted(zipPath(version).toString, version, e.getMessage)
          }
        } finally it.close()
      } finally { db.close(); options.close() }
    } finally FileUtils.deleteQuietly(dir)
  }

  /** Runs a row's handler, naming the file and version when it finds the row's key malformed. */
  private def naming(path: Path, version: Long)(handle: => Unit): Unit =
    try handle
    catch {
      case e: TtlStoreException if e.errorName == "LEGACY_KEY_MALFORMED" =>
        throw AdoptionErrors.legacyFileCorrupted(path.toString, version, e.getMessage)
    }

  /** Extracts the zip of `version` into `dir` (all but the metadata) and returns its metadata. */
  private def unzip(version: Long, dir: File): Metadata = {
    val path = zipPath(version)
    val zip = new ZipInputStream(CheckpointReads.open(fm, path))
    var metadata: Option[Metadata] = None
    try {
      var entry = zip.getNextEntry
      while (entry != null) {
        if (entry.getName == "metadata") {
          val text = new String(IOUtils.toByteArray(zip), StandardCharsets.UTF_8)
          metadata = Some(parseMetadata(text, path, version))
        } else if (!entry.isDirectory && FileNames.isPlain(entry.getName)) {
          val out = new FileOutputStream(new File(dir, entry.getName))
          try IOUtils.copy(zip, out)
          finally out.close()
        }
        entry = zip.getNextEntry
      }
    } catch {
      case e: TtlStoreException => throw e
      case NonFatal(e) if DiskFull.in(e) => throw e // writing the files out, not reading the zip
      case NonFatal(e) => throw AdoptionErrors.legacyFileCorrupted(path.toString, version, s"unreadable: $e")
    } finally zip.close()
    metadata.getOrElse(throw AdoptionErrors.legacyFileCorrupted(path.toString, version, "it has no metadata entry"))
  }
}

object RocksDbProviderFiles {
  private implicit val formats: Formats = DefaultFormats

  final case class SstEntry(localFileName: String, dfsSstFileName: String, sizeBytes: Long)
  final case class Metadata(sstFiles: List[SstEntry], numKeys: Long)

  /**
   * The metadata versions read, both followed by the same JSON. Every line writes "v1", except that
   * Spark 4.0 writes the checkpoint format version (`spark.sql.streaming.stateStore.checkpointFormatVersion`)
   * of the session that first wrote a snapshot in its JVM: "v2" in every later snapshot of that JVM,
   * whatever the format of their own queries.
   */
  val MetadataVersions: Seq[String] = Seq("v1", "v2")

  /** The encoding version Spark 4.3 writes before every key and value of a classic operator. */
  val EncodingVersion: Byte = 0

  private def parseMetadata(text: String, path: Path, version: Long): Metadata =
    try {
      val lines = text.linesIterator.toList
      def damaged(why: String) = AdoptionErrors.legacyFileCorrupted(path.toString, version, why)
      val header = lines.headOption.getOrElse("").trim
      if (!MetadataVersions.contains(header)) {
        val shown = header.take(20).map(c => if (c >= ' ' && c < '\u007f') c else '?')
        if (header.matches("v[0-9]{1,9}")) {
          throw AdoptionErrors.legacyFormatTooNew(path.toString, version, header, MetadataVersions.mkString(", "))
        }
        throw damaged(s"metadata version '$shown' (${MetadataVersions.mkString(" and ")} are read)")
      }
      val json = JsonMethods.parse(lines.drop(1).mkString("\n"))
      val columnFamilies = (json \ "columnFamilyMapping").extractOpt[Map[String, Any]].getOrElse(Map.empty)
      if (columnFamilies.nonEmpty) {
        throw damaged("column families (transformWithState state, which ttlstore cannot serve)")
      }
      val metadata = json.extract[Metadata]
      metadata.sstFiles.find(f =>
        f == null || !FileNames.isPlain(f.localFileName) || !FileNames.isPlain(f.dfsSstFileName))
        .foreach(f =>
          throw damaged(s"its metadata lists an SST named '${Option(f).map(_.localFileName).orNull}' " +
            s"stored as '${Option(f).map(_.dfsSstFileName).orNull}'"))
      metadata
    } catch {
      case e: TtlStoreException => throw e
      case NonFatal(e) => throw AdoptionErrors.legacyFileCorrupted(path.toString, version, e.getMessage)
    }

  /** The key row of a whole key (no prefix) as Spark's RocksDB provider stored it. */
  def wholeKey(raw: Array[Byte]): Array[Byte] = withoutEncodingByte(raw, "key")

  /**
   * A prefix-scan key as Spark's RocksDB provider stored it, split into the prefix row and the row of
   * the key's other columns.
   */
  def prefixKey(raw: Array[Byte]): (Array[Byte], Array[Byte]) = {
    if (raw.length < 4) throw AdoptionErrors.legacyKeyMalformed(s"a prefix key of ${raw.length} bytes")
    val prefixLen = Bytes.readIntLittleEndian(raw, 0)
    if (prefixLen < 1 || 4 + prefixLen >= raw.length) {
      throw AdoptionErrors.legacyKeyMalformed(s"a prefix length of $prefixLen in a key of ${raw.length} bytes")
    }
    (withoutEncodingByte(java.util.Arrays.copyOfRange(raw, 4, 4 + prefixLen), "key prefix"),
      withoutEncodingByte(java.util.Arrays.copyOfRange(raw, 4 + prefixLen, raw.length), "key"))
  }

  /** The UnsafeRow bytes of a stored value of the file `path` of `version`: Spark's encoding byte removed. */
  private def decoded(bytes: Array[Byte], path: Path, version: Long): Array[Byte] =
    if (hasEncodingByte(bytes)) java.util.Arrays.copyOfRange(bytes, 1, bytes.length)
    else throw AdoptionErrors.legacyFileCorrupted(path.toString, version, encodingProblem(bytes, "value"))

  private def withoutEncodingByte(bytes: Array[Byte], what: String): Array[Byte] =
    if (hasEncodingByte(bytes)) java.util.Arrays.copyOfRange(bytes, 1, bytes.length)
    else throw AdoptionErrors.legacyKeyMalformed(encodingProblem(bytes, what))

  private def hasEncodingByte(bytes: Array[Byte]): Boolean = bytes.nonEmpty && bytes(0) == EncodingVersion

  private def encodingProblem(bytes: Array[Byte], what: String): String =
    s"a $what with encoding version ${bytes.headOption.getOrElse("none")} (expected $EncodingVersion)"
}
