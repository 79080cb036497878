package io.ttlstore.checkpoint

/** Carries out [[Retention]]'s plan on a store's checkpoint files. */
object CheckpointCleaner {

  final case class Cleaned(changelogs: Int, snapshots: Int, ssts: Int, adoptedFiles: Int = 0, temporary: Int = 0)

  /**
   * Deletes what no retained version needs; `deleteAdopted` deletes the files of the Spark provider
   * state an adoption record names, once every retained version builds on a newer snapshot.
   */
  def clean(files: CheckpointFiles, minVersionsToRetain: Int, deleteAdopted: AdoptionRecord => Int): Cleaned = {
    val listing = files.listing()
    Retention.plan(listing, minVersionsToRetain) match {
      case None => Cleaned(0, 0, 0)
      case Some(plan) =>
        plan.deleteSnapshots.foreach(v => files.delete(files.snapshotPath(v)))
        plan.deleteChangelogs.foreach(v => files.delete(files.changelogPath(v)))
        val temporary = Retention.leftoverTemporaries(plan, listing.temporary)
        temporary.foreach(n => files.delete(files.rootPath(n)))
        val retained = listing.snapshots.rangeFrom(plan.baseSnapshot).toSeq
        val referenced = retained.flatMap { v =>
          files.manifest(v, listing.snapshotStamps(v), listing).sstFiles.map(_.dfsName)
        }.toSet
        val oldest = retained.headOption.map(v => listing.snapshotStamps(v).modificationTime)
        val orphans = Retention.orphanSsts(
          files.sstFiles().map(s => s.getPath.getName -> s.getModificationTime), referenced, oldest)
        orphans.foreach(n => files.delete(files.sstPath(n)))
        val adopted = files.adoption.read()
        val adoptedFiles = adopted.filter(a => Retention.adoptedFilesDeletable(plan, Some(a.version)))
          .map(deleteAdopted)
          .getOrElse(0)
        Cleaned(plan.deleteChangelogs.size, plan.deleteSnapshots.size, orphans.size, adoptedFiles, temporary.size)
    }
  }
}
