package io.ttlstore.checkpoint

/** Carries out [[Retention]]'s plan on a store's checkpoint files. */
object CheckpointCleaner {

  final case class Cleaned(changelogs: Int, snapshots: Int, ssts: Int, adoptedFiles: Int = 0, temporary: Int = 0)

  /**
   * Deletes what no retained version needs; `deleteAdopted` deletes the files of the Spark provider
   * state an adoption record names, once every retained version builds on a newer snapshot. Never
   * beside an upload of this store in this JVM ([[StoreLock]]).
   */
  def clean(files: CheckpointFiles, minVersionsToRetain: Int, maxVersionsToDelete: Option[Int],
      deleteAdopted: AdoptionRecord => Int): Cleaned =
    StoreLock.exclusively(files.root)(cleanNow(files, minVersionsToRetain, maxVersionsToDelete, deleteAdopted))

  private def cleanNow(files: CheckpointFiles, minVersionsToRetain: Int, maxVersionsToDelete: Option[Int],
      deleteAdopted: AdoptionRecord => Int): Cleaned = {
    val listing = files.listing()
    Retention.plan(listing, minVersionsToRetain, lineageBase(files, listing)) match {
      case None => Cleaned(0, 0, 0)
      case Some(whole) =>
        val plan = Retention.limited(whole, maxVersionsToDelete)
        val snapshotsGone = plan.deleteSnapshots.toSet
        val changelogsGone = plan.deleteChangelogs.toSet
        listing.snapshotFiles.filter(f => snapshotsGone(f.version)).foreach(f =>
          files.delete(files.snapshotPath(f)))
        listing.changelogFiles.filter(f => changelogsGone(f.version)).foreach(f =>
          files.delete(files.changelogPath(f)))
        val temporary = Retention.leftoverTemporaries(plan, listing.temporary)
        temporary.foreach(n => files.delete(files.rootPath(n)))
        val retained = listing.snapshotFiles.filterNot(f => snapshotsGone(f.version)).toSeq
        val referenced = retained.flatMap { f =>
          files.manifest(f, listing.snapshotStamps(f), listing).sstFiles.map(_.dfsName)
        }.toSet
        val oldest = retained.map(f => listing.snapshotStamps(f).modificationTime).reduceOption(_ min _)
        val orphans = Retention.orphanSsts(
          files.sstFiles().map(s => s.getPath.getName -> s.getModificationTime), referenced, oldest)
        orphans.foreach(n => files.delete(files.sstPath(n)))
        val adopted = files.adoption.read().filter(_ => Retention.complete(plan, whole))
        val adoptedFiles = adopted.filter(a => Retention.adoptedFilesDeletable(plan, Some(a.version)))
          .map(deleteAdopted)
          .getOrElse(0)
        Cleaned(changelogsGone.size, snapshotsGone.size, orphans.size, adoptedFiles, temporary.size)
    }
  }

  /**
   * Under checkpoint format v2, the version a changelog's lineage loads from: its newest listed
   * snapshot, or 0 (also when the file cannot be read: then nothing it might need is deleted).
   */
  private def lineageBase(files: CheckpointFiles, listing: Listing)(file: VersionFile): Long =
    file.id.flatMap { id =>
      scala.util.Try(files.lineageOf(file.version, id)).toOption.flatMap { recorded =>
        Lineage.fromBase(recorded, LineageItem(file.version, id), i => listing.hasSnapshot(i.version, Some(i.id)))
          .toOption.map(_._1.fold(0L)(_.version))
      }
    }.getOrElse(0L)
}
