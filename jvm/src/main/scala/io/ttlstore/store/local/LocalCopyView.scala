package io.ttlstore.store.local

import io.ttlstore.checkpoint.{AdoptionRecord, ChangelogWriter, TtlRecord, VersionFile}
import io.ttlstore.ttl.TimestampHistogram
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * What an opened version's rows ([[VersionRows]]) see of the local copy: the DB, the keys its
 * reads learned and those it certainly does not hold, what the last commit left (counts,
 * timestamps, cursors, adoption), the native filter's upkeep, a new changelog, and the two ways
 * a version ends (committed, invalidated).
 * [[LocalCopy]] implements it; a version reaches nothing else of it (loads, snapshots, maintenance).
 */
private[store] trait LocalCopyView {
  def db: RocksDbHandle
  def knownKeys: KnownKeys
  def keyIndex: KeyIndex
  def readAheadUse: ReadAheadUse

  def numRows: Long
  def timestamps: TimestampHistogram
  def streamTime: Long
  def countedFrom: Long
  def legacyRows: Long
  def adoption: Option[AdoptionRecord]
  def sweepResumesAt: Option[Array[Byte]]
  def upgradeResumesAt: Option[Array[Byte]]

  def usesFilter: Boolean
  def expiredOnDisk: Long
  def expiredUncounted(dropped: Long, storedRows: Long, share: Double): Boolean
  def takeFilterRemoved(): Long

  def newChangelog(file: VersionFile, codec: String): ChangelogWriter
  def committed(version: Long, numRows: Long, ttl: TtlRecord, sweepFrom: Option[Array[Byte]],
      upgradeFrom: Option[Array[Byte]]): Unit
  def invalidate(): Unit
}
