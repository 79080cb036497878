package io.ttlstore.checkpoint

import org.json4s.{JArray, JInt, JLong, JString, JValue}
import org.json4s.jackson.JsonMethods

/** One SST file of a snapshot: its name in the local DB and in the checkpoint, size and CRC32C. */
final case class SstFile(localName: String, dfsName: String, sizeBytes: Long, crc32c: Long)

/**
 * What a snapshot holds; stored as `manifest.json` inside `<v>.snapshot` (`<v>_<id>.snapshot` under
 * checkpoint format v2). `ttl` is the version's [[TtlRecord]] (absent in format 1); `checkpointId`
 * the version's checkpoint id under checkpoint format v2 (absent in format v1 and before format 3).
 */
final case class SnapshotManifest(
    formatVersion: Int,
    version: Long,
    numRows: Long,
    sstFiles: Seq[SstFile],
    createdAtMs: Long,
    ttl: Option[TtlRecord],
    checkpointId: Option[String]) {

  /** `manifest.json`, through [[JsonFields]]; fields that are None are left out. */
  def toJson: String = JsonMethods.compact(JsonFields.obj(
      "formatVersion" -> JInt(formatVersion),
      "version" -> JLong(version),
      "numRows" -> JLong(numRows),
      "sstFiles" -> JArray(sstFiles.toList.map(f =>
          JsonFields.obj(
            "localName" -> JString(f.localName),
            "dfsName" -> JString(f.dfsName),
            "sizeBytes" -> JLong(f.sizeBytes),
            "crc32c" -> JLong(f.crc32c)))),
      "createdAtMs" -> JLong(createdAtMs),
      "ttl" -> JsonFields.opt(ttl)(_.toJValue),
      "checkpointId" -> JsonFields.opt(checkpointId)(JString(_))))
}

object SnapshotManifest {

  /** Parses what [[SnapshotManifest.toJson]] writes; fails naming a field that is missing or of the wrong type. */
  def fromJson(json: String): SnapshotManifest = {
    val f = new JsonFields(JsonMethods.parse(json))
    SnapshotManifest(
      formatVersion = f.required("formatVersion", f.int),
      version = f.required("version", f.long),
      numRows = f.required("numRows", f.long),
      sstFiles = f.required("sstFiles", f.array).map(sstFile),
      createdAtMs = f.required("createdAtMs", f.long),
      ttl = f.optional("ttl").map(TtlRecord.fromJValue),
      checkpointId = f.string("checkpointId"))
  }

  private def sstFile(v: JValue): SstFile = {
    val f = new JsonFields(v)
    SstFile(f.required("localName", f.string), f.required("dfsName", f.string), f.required("sizeBytes", f.long),
      f.required("crc32c", f.long))
  }

  /** What makes a parsed manifest unusable for the snapshot file of `version` and `id`, if anything. */
  def problem(m: SnapshotManifest, version: Long, id: Option[String]): Option[String] = {
    val ssts = Option(m.sstFiles).getOrElse(Nil)
    if (m.version != version) Some(s"its manifest is of version ${m.version}")
    else if (m.checkpointId != id) {
      Some(s"its manifest is of checkpoint id ${m.checkpointId.getOrElse("none")}, its name of ${id.getOrElse("none")}")
    } else if (m.numRows < 0) Some(s"its manifest counts ${m.numRows} rows")
    else ssts.collectFirst {
      case f if f == null => "its manifest lists an empty SST entry"
      case f if !FileNames.isPlain(f.localName) || !f.localName.endsWith(".sst") =>
        s"its manifest lists an SST named '${f.localName}'"
      case f if !FileNames.isPlain(f.dfsName) => s"its manifest lists an SST stored as '${f.dfsName}'"
      case f if f.sizeBytes < 0 => s"its manifest gives ${f.localName} ${f.sizeBytes} bytes"
    }.orElse(Some("its manifest lists an SST twice").filter(_ => ssts.map(_.localName).distinct.size != ssts.size))
  }
}
