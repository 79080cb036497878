package io.ttlstore.checkpoint

import java.io.File

import org.apache.commons.io.FileUtils

/**
 * Snapshots waiting for upload, and the SST files already in the checkpoint.
 *
 * A commit that is due for a snapshot takes a local RocksDB checkpoint (hard links, cheap) and
 * offers it here; background maintenance uploads the newest one and drops older ones. SSTs that
 * an earlier snapshot of the same DB lineage uploaded are referenced again, not copied. When the
 * local DB is restored from the checkpoint, its lineage changes: RocksDB may reuse file numbers for
 * other contents, so the mapping is reset to exactly the restored snapshot's files.
 */
final class SnapshotUploader(files: CheckpointFiles) {
  import SnapshotUploader._

  private var lineage = 0L
  private var uploaded = Map.empty[String, SstFile]
  private var pending: Option[Pending] = None
  private var uploads = Upload.Zero
  @volatile private var newest: Option[VersionFile] = None
  @volatile private var newestKnown: Option[Stamp] = None

  def reset(restored: Option[SnapshotManifest]): Unit = synchronized {
    lineage += 1
    newestKnown = restored.map(Stamp.of)
    uploaded = restored.map(m => m.sstFiles.map(f => f.localName -> f).toMap).getOrElse(Map.empty)
    pending.foreach(p => FileUtils.deleteQuietly(p.dir))
    pending = None
  }

  /** Queues the local checkpoint in `dir` as the snapshot of `version` (under checkpoint id `id` in format v2). */
  def offer(file: VersionFile, numRows: Long, ttl: Option[TtlRecord], dir: File): Unit = synchronized {
    pending.foreach(p => FileUtils.deleteQuietly(p.dir))
    pending = Some(Pending(file, numRows, ttl, dir, lineage))
  }

  /** The SST files the checkpoint holds of the DB's lineage, by local name. */
  def uploadedFiles: Map[String, SstFile] = synchronized(uploaded)

  /** The snapshot this uploader uploaded last, if any: a lineage may start there from now on. */
  def newestUploaded: Option[VersionFile] = newest

  /**
   * The newest snapshot of the store this uploader knows the checkpoint holds: the one its DB was restored from, or
   * a later one it uploaded since (None: neither).
   */
  def newestInCheckpoint: Option[Stamp] = newestKnown

  /** Uploads the newest pending snapshot, if any; safe to run beside the task using the DB. */
  def uploadPending(): Option[Upload] = {
    val job = synchronized {
      val p = pending
      pending = None
      p.map(j => (j, uploaded))
    }
    job.map { case (p, known) =>
      val start = System.nanoTime()
      try {
        val (manifest, bytes) =
          StoreLock.exclusively(files.root)(files.writeSnapshot(p.file, p.numRows, p.ttl, p.dir, known))
        newest = Some(p.file)
        synchronized {
          if (lineage == p.lineage) uploaded = manifest.sstFiles.map(f => f.localName -> f).toMap
          if (newestKnown.forall(_.version < manifest.version)) newestKnown = Some(Stamp.of(manifest))
        }
        val upload = Upload(p.file.version, 1L, bytes, (System.nanoTime() - start) / 1000000L)
        synchronized { uploads = uploads + upload }
        upload
      } finally FileUtils.deleteQuietly(p.dir)
    }
  }

  /** The uploads finished since the previous call, summed (a commit reports them in its metrics). */
  def takeUploads(): Upload = synchronized {
    val done = uploads
    uploads = Upload.Zero
    done
  }

  def discardPending(): Unit = synchronized {
    pending.foreach(p => FileUtils.deleteQuietly(p.dir))
    pending = None
  }
}

object SnapshotUploader {
  private final case class Pending(file: VersionFile, numRows: Long, ttl: Option[TtlRecord],
      dir: File, lineage: Long)

  /** Snapshot uploads: one (`version`), or a sum of `count` of them (`version` the newest). */
  final case class Upload(version: Long, count: Long, bytes: Long, latencyMs: Long) {
    def +(other: Upload): Upload =
      Upload(math.max(version, other.version), count + other.count, bytes + other.bytes, latencyMs + other.latencyMs)
  }

  object Upload {
    val Zero: Upload = Upload(0L, 0L, 0L, 0L)
  }

  /** A snapshot in the checkpoint: its version, and when its manifest was written (ms since the epoch). */
  final case class Stamp(version: Long, createdAtMs: Long)

  object Stamp {
    def of(manifest: SnapshotManifest): Stamp = Stamp(manifest.version, manifest.createdAtMs)
  }
}
