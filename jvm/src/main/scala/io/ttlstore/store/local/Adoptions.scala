package io.ttlstore.store.local

import java.io.File

import io.ttlstore.checkpoint.{AdoptionRecord, CheckpointFiles, Listing}
import io.ttlstore.errors.AdoptionErrors
import io.ttlstore.legacy.LegacySource
import io.ttlstore.ttl.Clock
import io.ttlstore.store.rocksdb.{LocalDiskFull, RocksDbHandle}

/**
 * The Spark provider state one local copy builds on (KIP-258's old format): found in the store's
 * directory at the first load after `ttlstore migrate`, loaded into the legacy family, and recorded
 * in `adopted.json` by the first commit so that every later load finds the same base.
 */
final class Adoptions(
    files: CheckpointFiles,
    workDir: File,
    /** The codec Spark's provider compressed its files with (spark.sql.streaming.stateStore.compression.codec). */
    stateCodec: String,
    /** Processing time, read once when a store adopts Spark's state (its `migration` stamp). */
    clock: Clock,
    /** A legacy key of Spark's `provider` ("hdfs", "rocksdb") as this store encodes keys. */
    legacyKey: (String, Array[Byte]) => Array[Byte]) {

  private var record: Option[AdoptionRecord] = None

  /** True once adopted.json holds `record`. */
  private var written = false

  /** The adoption this store builds on, once found. */
  def current: Option[AdoptionRecord] = record

  /** Writes adopted.json before the first commit after an adoption (read-only readers never do). */
  def persist(): Unit = record.filter(_ => !written).foreach { r =>
    files.adoption.write(r)
    written = true
  }

  /**
   * The Spark provider state that version `version` builds on: the one recorded in adopted.json,
   * or, for a store with no files of its own at or below `version`, Spark's files if they hold it
   * (the first load after `ttlstore migrate`).
   */
  def baseFor(version: Long, listing: Listing): Option[(AdoptionRecord, LegacySource)] = {
    if (!written) files.adoption.read().foreach { r => record = Some(r); written = true }
    record match {
      case Some(r) if r.version <= version =>
        Some(r -> LegacySource.named(r.provider, files.storeDir, files.hadoopConf, files.adoption.path))
      case Some(_) => None
      case None if version > 0 && !listing.changelogs.exists(_ <= version) && !listing.snapshots.exists(_ <= version) =>
        LegacySource.holding(version, files.storeDir, files.hadoopConf).map { source =>
          AdoptionRecord(source.name, version, stateCodec, clock.millis()) -> source
        }
      case None => missingRecord(version, listing)
    }
  }

  /**
   * None, or the error for a store whose own files begin after a version that Spark's provider's
   * files hold, with no snapshot below them: it was adopted, and its adopted.json is gone.
   */
  private def missingRecord(version: Long, listing: Listing): Option[(AdoptionRecord, LegacySource)] = {
    val first = listing.changelogs.rangeImpl(None, Some(version + 1)).headOption
    if (version <= 0 || listing.snapshots.exists(_ <= version) || !first.exists(_ > 1)) None
    else LegacySource.holding(first.get - 1, files.storeDir, files.hadoopConf) match {
      case Some(source) =>
        throw AdoptionErrors.adoptionRecordMissing(files.adoption.path.toString, first.get - 1, source.name)
      case None => None
    }
  }

  /**
   * Loads version `adopted.version` of Spark's state into the legacy family of the empty DB `db`;
   * returns the legacy rows it holds. Spark's files that it writes out locally on a full disk fail as
   * `LOCAL_DISK_FULL`.
   */
  def adopt(adopted: AdoptionRecord, source: LegacySource, db: RocksDbHandle): Long = {
    val batch = db.newLegacyBatch()
    try {
      LocalDiskFull.named(db.storeName, workDir, s"adopt version ${adopted.version} of Spark's state") {
        source.replay(adopted.version, adopted.codec, workDir)(
          (k, v) => { batch.put(legacyKey(adopted.provider, k), v); batch.flushIfFull() },
          k => { batch.delete(legacyKey(adopted.provider, k)); batch.flushIfFull() })
        batch.flushTo()
      }
    } finally batch.close()
    record = Some(adopted)
    countLegacy(db)
  }

  private def countLegacy(db: RocksDbHandle): Long = {
    val it = db.newLegacyIterator()
    try {
      var n = 0L
      it.seekToFirst()
      while (it.isValid) { n += 1; it.next() }
      n
    } finally it.close()
  }
}
