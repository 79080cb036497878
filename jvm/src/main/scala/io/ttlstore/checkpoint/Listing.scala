package io.ttlstore.checkpoint

import scala.collection.immutable.SortedSet

/** When a snapshot file was written and how long it is: a rewritten file has another stamp. */
final case class FileStamp(modificationTime: Long, length: Long)

/** The committed versions found in a store's checkpoint directory. */
final case class Listing(
    changelogs: SortedSet[Long],
    snapshots: SortedSet[Long],
    snapshotStamps: Map[Long, FileStamp] = Map.empty) {
  def latest: Option[Long] = (changelogs ++ snapshots).lastOption
}
