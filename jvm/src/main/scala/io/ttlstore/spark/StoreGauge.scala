package io.ttlstore.spark

/**
 * A figure of one store, as it stands at a version's metrics, that a user watches per partition: Spark 4.1 and
 * later report each operator's worst partitions of it in the progress (its instance metrics,
 * `numStateStoreInstanceMetricsToReport` of them, as `<name>.partition_<id>_<store>`; [[InstanceMetrics]] says
 * which on each line), and `ttlstore inspect` shows it. -1 stands for "none yet".
 *
 * @param worstIsLowest whether the lowest values are the worst (a snapshot version lagging), not the highest
 * @param kind how Spark's UI shows it
 */
final case class StoreGauge(name: String, description: String, worstIsLowest: Boolean, kind: StoreGauge.Kind)

/** The figures ttlstore reports per store. */
object StoreGauge {
  sealed trait Kind
  case object Size extends Kind
  case object Duration extends Kind
  case object Count extends Kind

  val SnapshotLastUploaded = StoreGauge("ttlstoreSnapshotLastUploaded",
    "ttlstore: the newest snapshot version of the store in the checkpoint (-1: none yet)", worstIsLowest = true,
    Count)
  val SnapshotAgeMs = StoreGauge("ttlstoreSnapshotAgeMs",
    "ttlstore: time since the store's newest snapshot in the checkpoint was written (-1: none yet)",
    worstIsLowest = false, Duration)
  val ExpiredRowsStored = StoreGauge("ttlstoreExpiredRowsStored",
    "ttlstore: rows of the store expired but still on disk at the commit", worstIsLowest = false, Count)
  val LocalBytes = StoreGauge("ttlstoreLocalBytes", "ttlstore: bytes of the store's DB on the executor's disk",
    worstIsLowest = false, Size)
  val FilesNotLocal = StoreGauge("ttlstoreFilesNotLocal",
    "ttlstore: SST files of the store its DB still reads from the checkpoint (lazy load, remote mode)",
    worstIsLowest = false, Count)

  val all: Seq[StoreGauge] = Seq(SnapshotLastUploaded, SnapshotAgeMs, ExpiredRowsStored, LocalBytes, FilesNotLocal)
}
