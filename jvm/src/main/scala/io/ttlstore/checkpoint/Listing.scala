package io.ttlstore.checkpoint

import scala.collection.immutable.SortedSet

/** When a snapshot file was written and how long it is: a rewritten file has another stamp. */
final case class FileStamp(modificationTime: Long, length: Long)

/**
 * The committed versions found in a store's checkpoint directory, and the temporary files that
 * writers left there (name -> the version it was written for).
 */
final case class Listing(
    changelogs: SortedSet[Long],
    snapshots: SortedSet[Long],
    snapshotStamps: Map[Long, FileStamp] = Map.empty,
    temporary: Map[String, Long] = Map.empty) {
  def latest: Option[Long] = (changelogs ++ snapshots).lastOption
}

object Listing {

  /**
   * The version of a temporary file a writer of `<v>.changelog` or `<v>.snapshot` leaves until it
   * renames it (`.<v>.changelog.<uuid>[.TID<n>].tmp`), or its Hadoop checksum file (`..<v>.….tmp.crc`);
   * None for any other name.
   */
  def temporaryVersion(name: String): Option[Long] =
    if (!name.startsWith(".") || !(name.endsWith(".tmp") || name.endsWith(".tmp.crc"))) None
    else {
      val parts = name.dropWhile(_ == '.').split('.')
      if (parts.length >= 3 && (parts(1) == "changelog" || parts(1) == "snapshot")) parts(0).toLongOption
      else None
    }

}
