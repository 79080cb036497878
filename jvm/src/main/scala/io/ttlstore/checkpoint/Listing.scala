package io.ttlstore.checkpoint

import scala.collection.immutable.SortedSet

/** When a snapshot file was written and how long it is: a rewritten file has another stamp. */
final case class FileStamp(modificationTime: Long, length: Long)

/**
 * One committed version's file: its version, and its checkpoint id under checkpoint format v2
 * (None in format v1). Its name is `<v>` or `<v>_<id>` and a suffix ([[FileNames.stem]]).
 */
final case class VersionFile(version: Long, id: Option[String]) {
  def stem: String = FileNames.stem(version, id)
  override def toString: String = stem
}

object VersionFile {
  implicit val ordering: Ordering[VersionFile] = Ordering.by((f: VersionFile) => (f.version, f.id))
}

/**
 * The committed files found in a store's checkpoint directory, and the temporary files that writers
 * left there (name -> the version it was written for). Under checkpoint format v2 a version may have
 * several files, one per attempt that committed it.
 */
final case class Listing(
    changelogFiles: SortedSet[VersionFile],
    snapshotFiles: SortedSet[VersionFile],
    snapshotStamps: Map[VersionFile, FileStamp] = Map.empty,
    temporary: Map[String, Long] = Map.empty) {

  /** The versions with a changelog, of any checkpoint id. */
  lazy val changelogs: SortedSet[Long] = changelogFiles.map(_.version)

  /** The versions with a snapshot, of any checkpoint id. */
  lazy val snapshots: SortedSet[Long] = snapshotFiles.map(_.version)

  def latest: Option[Long] = (changelogs ++ snapshots).lastOption

  def hasChangelog(version: Long, id: Option[String]): Boolean = changelogFiles(VersionFile(version, id))
  def hasSnapshot(version: Long, id: Option[String]): Boolean = snapshotFiles(VersionFile(version, id))

  /** The snapshots written without checkpoint ids (format v1), by version. */
  lazy val snapshotsWithoutIds: SortedSet[Long] = snapshotFiles.filter(_.id.isEmpty).map(_.version)

  /** True when some committed file carries a checkpoint id: the store was written in format v2. */
  def hasCheckpointIds: Boolean = changelogFiles.exists(_.id.isDefined) || snapshotFiles.exists(_.id.isDefined)
}

object Listing {

  /** A listing of format v1 files (no checkpoint ids). */
  def ofVersions(changelogs: Iterable[Long], snapshots: Iterable[Long]): Listing =
    Listing(SortedSet.empty[VersionFile] ++ changelogs.map(VersionFile(_, None)),
      SortedSet.empty[VersionFile] ++ snapshots.map(VersionFile(_, None)))

  /** The version and checkpoint id a committed file's name gives (`<stem>.changelog`, `<stem>.snapshot`). */
  def committedFile(name: String, suffix: String): Option[VersionFile] =
    if (!name.endsWith(suffix)) None
    else FileNames.parseStem(name.stripSuffix(suffix)).map { case (v, id) => VersionFile(v, id) }

  /**
   * The version of a temporary file a writer of `<stem>.changelog` or `<stem>.snapshot` leaves
   * until it renames it (`.<stem>.changelog.<uuid>[.TID<n>].tmp`), or its Hadoop checksum file
   * (`..<stem>.….tmp.crc`); None for any other name.
   */
  def temporaryVersion(name: String): Option[Long] =
    if (!name.startsWith(".") || !(name.endsWith(".tmp") || name.endsWith(".tmp.crc"))) None
    else {
      val parts = name.dropWhile(_ == '.').split('.')
      if (parts.length >= 3 && (parts(1) == "changelog" || parts(1) == "snapshot")) {
        FileNames.parseStem(parts(0)).map(_._1)
      } else None
    }

}
