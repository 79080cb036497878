package io.ttlstore.store.local

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.ttlstore.checkpoint.{CheckpointCleaner, CheckpointFiles, SnapshotUploader}
import io.ttlstore.legacy.LegacySource

/**
 * What background maintenance does for one store, in the two parts Spark 4.3 schedules apart: the
 * local DB's work (upload the newest pending snapshot, then the compaction a commit asked for) and the
 * checkpoint's (delete what no retained version needs). Maintenance logs its failures and carries on:
 * the changelogs keep every version recoverable.
 *
 * @param minVersionsToRetain Spark's minVersionsToRetain
 * @param maxVersionsToDelete Spark's maxVersionsToDeletePerMaintenance; None: no limit
 */
private[ttlstore] final class StoreMaintenance(
    storeName: String,
    files: CheckpointFiles,
    snapshots: SnapshotUploader,
    local: LocalCopy,
    report: SnapshotUploadReport,
    minVersionsToRetain: Int,
    maxVersionsToDelete: Option[Int])
  extends Logging {

  /**
   * Uploads the newest pending snapshot (in remote mode, then demotes local files over the executor's budget and
   * fills the room left with the remote files read last: [[LocalSstCache]]), then compacts the store if a commit
   * asked for it.
   */
  def snapshot(): Unit = {
    try {
      snapshots.uploadPending().foreach { u =>
        logInfo(s"Uploaded the snapshot of version ${u.version} of $storeName (${u.bytes} bytes in ${u.latencyMs} ms)")
        report.uploaded(u.version)
        LocalSstCache.trim()
      }
    } catch {
      case NonFatal(e) => logWarning(s"Snapshot upload for $storeName failed; will retry later", e)
    }
    compact()
  }

  /** Compacts a store a commit found mostly expired, so that the native filter drops those rows. */
  private def compact(): Unit =
    try {
      val start = System.nanoTime()
      if (local.compactIfWanted()) {
        logInfo(s"Compacted $storeName for its expired rows in ${(System.nanoTime() - start) / 1000000L} ms")
      }
    } catch {
      case NonFatal(e) => logWarning(s"Compacting $storeName failed; RocksDB's own compactions go on", e)
    }

  /** Deletes the checkpoint files that no retained version needs (and the adopted provider's files). */
  def cleanup(): Unit =
    try {
      CheckpointCleaner.clean(files, minVersionsToRetain, maxVersionsToDelete,
        adopted =>
          LegacySource.named(adopted.provider, files.storeDir, files.hadoopConf, files.adoption.path).deleteFiles())
    } catch {
      case NonFatal(e) => logWarning(s"Cleaning old checkpoint files of $storeName failed", e)
    }
}
