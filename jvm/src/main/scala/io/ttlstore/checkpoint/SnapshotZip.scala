package io.ttlstore.checkpoint

import java.io.{BufferedInputStream, File, InputStream, OutputStream}
import java.nio.file.Files
import java.util.zip.{ZipEntry, ZipInputStream, ZipOutputStream}

import scala.util.control.NonFatal

import io.ttlstore.errors.{DiskFull, TtlStoreErrors, TtlStoreException}

/**
 * A snapshot file's layout: a zip of `manifest.json` ([[SnapshotManifest]]) first, then the DB's small files
 * (MANIFEST, OPTIONS, CURRENT) under `db/`. Its SST files are beside it in the checkpoint.
 */
private[checkpoint] object SnapshotZip {
  private val ManifestEntry = "manifest.json"
  private val DbEntryPrefix = "db/"

  /** Writes the snapshot of `manifest` with the small files `files` to `out`, and closes it. */
  def write(out: OutputStream, manifest: SnapshotManifest, files: Seq[File]): Unit = {
    val zip = new ZipOutputStream(out)
    zip.putNextEntry(new ZipEntry(ManifestEntry))
    zip.write(manifest.toJson.getBytes("UTF-8"))
    zip.closeEntry()
    files.foreach { f =>
      zip.putNextEntry(new ZipEntry(DbEntryPrefix + f.getName))
      Files.copy(f.toPath, zip)
      zip.closeEntry()
    }
    zip.close()
  }

  /**
   * Reads the snapshot at `path` of `version` (committed under checkpoint id `id`) from `in`: its manifest, and with
   * `into` its DB files into that directory (without, it stops after the manifest, which is written first). What
   * does not read as a snapshot of that version fails as `SNAPSHOT_CORRUPTED` naming `path`; a manifest of a format
   * newer than `newest` as `FORMAT_TOO_NEW`.
   */
  def read(in: InputStream, path: String, version: Long, id: Option[String], into: Option[File],
      newest: Int): SnapshotManifest = {
    def corrupted(detail: String) = TtlStoreErrors.snapshotCorrupted(path, version, detail)
    var manifest: Option[SnapshotManifest] = None
    try {
      val zip = new ZipInputStream(new BufferedInputStream(in))
      var entry = zip.getNextEntry
      while (entry != null) {
        val name = entry.getName
        if (name == ManifestEntry) {
          val m = SnapshotManifest.fromJson(new String(zip.readAllBytes(), "UTF-8"))
          if (m.formatVersion > newest) throw TtlStoreErrors.formatTooNew(path, m.formatVersion, newest)
          SnapshotManifest.problem(m, version, id).foreach(why => throw corrupted(why))
          manifest = Some(m)
        } else {
          val file = name.stripPrefix(DbEntryPrefix)
          if (!name.startsWith(DbEntryPrefix) || !FileNames.isPlain(file)) throw corrupted(s"an entry named '$name'")
          into.foreach(dir => Files.copy(zip, new File(dir, file).toPath))
        }
        entry = if (manifest.isDefined && into.isEmpty) null else zip.getNextEntry
      }
    } catch {
      case e: TtlStoreException => throw e
      case NonFatal(e) if DiskFull.in(e) => throw e // writing the DB files out, not reading the snapshot
      case NonFatal(e) => throw corrupted(e.toString)
    }
    manifest.getOrElse(throw corrupted("no manifest"))
  }
}
