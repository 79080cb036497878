package io.ttlstore

/** Carries out [[Retention]]'s plan on a store's checkpoint files. */
object CheckpointCleaner {

  final case class Cleaned(changelogs: Int, snapshots: Int, ssts: Int)

  def clean(files: CheckpointFiles, minVersionsToRetain: Int): Cleaned =
    Retention.plan(files.listing(), minVersionsToRetain) match {
      case None => Cleaned(0, 0, 0)
      case Some(plan) =>
        plan.deleteSnapshots.foreach(v => files.delete(files.snapshotPath(v)))
        plan.deleteChangelogs.foreach(v => files.delete(files.changelogPath(v)))
        val retained = files.listing().snapshots.toSeq
        val manifests = retained.map(files.readManifest)
        val referenced = manifests.flatMap(_.sstFiles.map(_.dfsName)).toSet
        val oldest = retained.headOption.flatMap(v => files.modificationTime(files.snapshotPath(v)))
        val orphans = Retention.orphanSsts(
          files.sstFiles().map(s => s.getPath.getName -> s.getModificationTime), referenced, oldest)
        orphans.foreach(n => files.delete(files.sstPath(n)))
        Cleaned(plan.deleteChangelogs.size, plan.deleteSnapshots.size, orphans.size)
    }
}
