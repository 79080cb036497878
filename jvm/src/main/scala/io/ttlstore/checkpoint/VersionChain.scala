package io.ttlstore.checkpoint

import scala.collection.immutable.SortedSet

/**
 * How every provider's files rebuild a version: the newest snapshot at or below it (none: the empty
 * state, version 0), then the changes of each version after that snapshot, in order. One rule for
 * ttlstore's files, its retention, and the files of Spark's HDFS and RocksDB providers. Pure.
 */
final case class VersionChain(version: Long, snapshot: Option[Long]) {

  /** The version the chain starts from: its snapshot, or 0 (the empty state). */
  def base: Long = snapshot.getOrElse(0L)

  /** The versions whose changes are replayed on top of the base, oldest first. */
  def changes: Seq[Long] = (base + 1) to version

  /** The first version whose changes are not in `available`, if any. */
  def firstMissing(available: Long => Boolean): Option[Long] = changes.find(v => !available(v))

  /** Files read to rebuild the version: the snapshot, if any, and one per change. */
  def files: Int = snapshot.size + changes.size
}

object VersionChain {

  /** The chain of `version` over the versions that have a snapshot. */
  def of(version: Long, snapshots: SortedSet[Long]): VersionChain =
    VersionChain(version, snapshots.rangeImpl(None, Some(version + 1)).lastOption)
}
