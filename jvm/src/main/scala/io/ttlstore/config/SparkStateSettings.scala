package io.ttlstore.config

import scala.util.Try

import io.ttlstore.errors.TtlStoreErrors

/**
 * One of Spark's own state store settings and what ttlstore does with it. `spark`: what Spark does
 * with it (for every provider, or inside its own providers); `ttlstore`: what ttlstore does
 * instead; `test`: where a test shows it.
 */
final case class SparkStateSetting(key: String, sparkDefault: String, handling: SparkStateSetting.Handling,
    spark: String, ttlstore: String, test: String)

object SparkStateSetting {

  /** How ttlstore meets a setting of Spark's. */
  sealed abstract class Handling(val text: String)

  /** Spark applies it around every provider (the maintenance thread pool, schema checks): ttlstore too. */
  case object AppliedBySpark extends Handling("applied by Spark for every provider")

  /** Spark's providers read it and so does ttlstore, with the same meaning. */
  case object Honoured extends Handling("honoured")

  /** What the setting turns on, ttlstore always does (its files carry checksums, for instance). */
  case object AlwaysOn extends Handling("always on in ttlstore")

  /** It concerns stores ttlstore does not serve (transformWithState's) or Spark's own file formats. */
  case object NotApplicable extends Handling("does not apply to ttlstore's stores")
}

/**
 * Spark 4.3's state store settings (`StateStoreConf`, `SQLConf`), each with what ttlstore does with
 * it: the table of record for docs/configuration.md, which a test keeps complete against the Spark
 * on the classpath. ttlstore reads the few it acts on here, with Spark's defaults (a setting of a
 * newer Spark line is simply unset on an older one).
 */
object SparkStateSettings {
  import SparkStateSetting._

  private val P = ConfigKey.SparkStatePrefix

  val AutoSnapshotRepairEnabled: String = P + "autoSnapshotRepair.enabled"
  val AutoSnapshotRepairFailures: String = P + "autoSnapshotRepair.numFailuresBeforeActivating"
  val AutoSnapshotRepairMaxReplay: String = P + "autoSnapshotRepair.maxChangeFileReplay"
  val MaxVersionsToDeletePerMaintenance: String = P + "maxVersionsToDeletePerMaintenance"

  /** Spark 4.2 and later: a checksum in every key and value of its providers' files, fixed in the offset log. */
  val RowChecksumEnabled: String = P + "rowChecksum.enabled"

  /** Keys of Spark's RocksDB provider alone; ttlstore has its own settings for what they tune. */
  val RocksDbProviderPrefix: String = P + "rocksdb."

  private val crcs = "Every file ttlstore writes carries a CRC-32C that is verified whenever it is read, and " +
    "RocksDB verifies the block checksum of every data block it reads: a flipped bit fails the load or read " +
    "naming the file (CHANGELOG_CORRUPTED, SNAPSHOT_CORRUPTED, SST_CORRUPTED), whatever the setting."
  private val damageTest = "tests/test_damage_matrix.py (every file kind, bytes flipped)"
  private val maintenance = "Spark's maintenance thread calls the provider's snapshot and cleanup maintenance; " +
    "ttlstore uploads snapshots and deletes old files there."
  private val maintenanceTest = "tests/test_native_filter.py (the filter's compaction under Spark's maintenance)"
  private val lagReport = "ttlstore reports every snapshot upload to the coordinator as Spark's providers do."
  private val lagTest = "TtlStoreCoordinatorReportSuite"

  val all: Seq[SparkStateSetting] = Seq(
    SparkStateSetting(P + "providerClass",
      "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", Honoured,
      "Chooses the provider; pinned in the checkpoint's offset log.",
      "io.ttlstore.TtlStateStoreProvider; a checkpoint of another provider is refused by name or migrated.",
      "tests/test_migrate.py"),
    SparkStateSetting(P + "minDeltasForSnapshot", "10", Honoured,
      "A snapshot after this many versions without one.",
      "The same: a local snapshot at the commit, uploaded by maintenance.", "tests/test_damage_matrix.py"),
    SparkStateSetting("spark.sql.streaming.minBatchesToRetain", "100", Honoured,
      "The latest versions that must stay loadable; older files are deleted.",
      "The same (Retention): every retained version loads.", "RetentionSuite, tests/test_spark_settings.py"),
    SparkStateSetting("spark.sql.streaming.maxBatchesToRetainInMemory", "2", NotApplicable,
      "The HDFS provider keeps this many versions' maps in memory.",
      "ttlstore holds one version in its local RocksDB copy and loads another from it by replay; " +
        "the setting has nothing to size.", "tests/test_spark_settings.py"),
    SparkStateSetting("spark.sql.streaming.ratioExtraSpaceAllowedInCheckpoint", "0.3", NotApplicable,
      "Spark's RocksDB provider lets stale versions pile up to batch their deletion.",
      "ttlstore deletes stale files at each cleanup.", "tests/test_spark_settings.py"),
    SparkStateSetting(MaxVersionsToDeletePerMaintenance, "-1", Honoured,
      "Spark's RocksDB provider deletes at most this many versions per maintenance (-1: all).",
      "The same: the oldest deletable versions first, the rest at the next maintenance.",
      "RetentionSuite, tests/test_spark_settings.py"),
    SparkStateSetting(P + "compression.codec", "lz4", Honoured,
      "The codec of delta, snapshot and changelog files.",
      "The codec of ttlstore's changelogs; Spark's files are read with the codec their query used.",
      "tests/test_migrate.py, tests/test_spark_settings.py"),
    SparkStateSetting(P + "checkpointFormatVersion", "1", Honoured,
      "2: checkpoint ids for every version (Spark 4.0 and later).",
      "The same; refused by name on Spark 3.5 (CHECKPOINT_FORMAT_V2_NOT_IN_SPARK).", "tests/test_checkpoint_v2.py"),
    SparkStateSetting(AutoSnapshotRepairEnabled, "true", Honoured,
      "A snapshot that fails to load is skipped for an older one (or the empty state) plus changelogs.",
      "The same, with the metric ttlstoreSnapshotsRepaired; under checkpoint format 2 the older snapshot is " +
        "one of the version's lineage, walked back through the lineage each changelog records.",
      "tests/test_damage_matrix.py, tests/test_checkpoint_v2.py, DamagedCheckpointSuite"),
    SparkStateSetting(AutoSnapshotRepairFailures, "1", Honoured,
      "How often the newest snapshot is tried before older ones are.", "The same.", "tests/test_spark_settings.py"),
    SparkStateSetting(AutoSnapshotRepairMaxReplay, "500", Honoured,
      "The most change files a repaired load replays; more fails the load.",
      "The same; the load fails with SNAPSHOT_REPAIR_FAILED naming the snapshot and the bases tried.",
      "DamagedCheckpointSuite"),
    SparkStateSetting(RowChecksumEnabled, "false", AlwaysOn,
      "Both providers store a checksum with each key and value and verify it when loading from the " +
        "checkpoint; fixed for a checkpoint in its offset log.",
      crcs + " A row's timestamp lies inside its checksummed bytes; the native filter reads rows " +
        "through RocksDB, which verifies the block first. ttlstore migrate refuses a checkpoint written " +
        "with row checksums (LEGACY_ROW_CHECKSUMS).",
      damageTest + ", tests/test_migrate.py"),
    SparkStateSetting(P + "rowChecksum.readVerificationRatio", "0", AlwaysOn,
      "Verify the row checksum on every n-th read too (0: only when loading).",
      "RocksDB verifies every block a read touches: every read is verified.", damageTest),
    SparkStateSetting("spark.sql.streaming.checkpoint.fileChecksum.enabled", "true", AlwaysOn,
      "With checkpoint format 2, a checksum file beside each state file, verified when it is read.",
      crcs + " With either checkpoint format.", damageTest),
    SparkStateSetting("spark.sql.streaming.checkpoint.fileChecksum.skipCreationIfFileMissingChecksum", "true",
      NotApplicable, "Compatibility with state files written before checksum files.",
      "ttlstore's checksums are inside its files, never beside them.", "tests/test_spark_settings.py"),
    SparkStateSetting(P + "fileChecksumThreadPoolSize", "4", NotApplicable,
      "Threads that write a file and its checksum file side by side.",
      "ttlstore's checksums are inside its files.", "tests/test_spark_settings.py"),
    SparkStateSetting(P + "formatValidation.enabled", "true", NotApplicable,
      "Spark's HDFS provider alone (Spark's own doc says so): its files hold bare rows without a format " +
        "version or checksum, so it checks the rows it loads against the state schema.",
      "ttlstore does not check each row's layout: its files carry CRCs and their format version (an unknown " +
        "one fails by name), and Spark's stateSchemaCheck compares the query's schema with the checkpoint's " +
        "at start, for every provider.", "tests/test_spark_settings.py"),
    SparkStateSetting(P + "stateSchemaCheck", "true", AppliedBySpark,
      "Spark compares the query's state schema with the checkpoint's at start, for every provider.",
      "The same check runs before ttlstore's stores open, failing as it does with Spark's providers.",
      "tests/test_spark_settings.py"),
    SparkStateSetting(P + "maxNumStateSchemaFiles", "128", NotApplicable,
      "Schema evolution of transformWithState.", "ttlstore serves classic operators only.",
      "tests/test_spark_settings.py"),
    SparkStateSetting(P + "valueStateSchemaEvolutionThreshold", "16", NotApplicable,
      "Schema evolution of transformWithState.", "ttlstore serves classic operators only.",
      "tests/test_spark_settings.py"),
    SparkStateSetting(P + "encodingFormat", "unsaferow", AppliedBySpark,
      "The row encoding of transformWithState's stores; Spark refuses avro for classic operators at " +
        "analysis, whichever the provider.",
      "The same refusal; classic operators' stores hold UnsafeRows, and transformWithState's column " +
        "families are refused by name.", "tests/test_spark_settings.py"),
    SparkStateSetting(P + "skipNullsForStreamStreamJoins.enabled", "false", AppliedBySpark,
      "The join's state manager skips null values, for every provider.", "The same.",
      "tests/test_spark_settings.py"),
    SparkStateSetting(P + "commitValidation.enabled", "true", AppliedBySpark,
      "Spark checks that every store of a foreachBatch query committed (Spark 4.1 and later).",
      "ttlstore reports its commits to the check as Spark's providers do.", "tests/test_batch_time.py (foreachBatch)"),
    SparkStateSetting(P + "unloadOnCommit", "false", AppliedBySpark,
      "Spark runs maintenance and closes each store when its task ends, for every provider.",
      "ttlstore's stores close and load again from their local copy or the checkpoint.",
      "tests/test_spark_settings.py"),
    SparkStateSetting(P + "maintenanceInterval", "60000ms", AppliedBySpark,
      "How often Spark's maintenance runs.", maintenance, maintenanceTest),
    SparkStateSetting(P + "numStateStoreMaintenanceThreads", "cores / 4, at least 2", AppliedBySpark,
      "Threads of Spark's maintenance pools.", maintenance, maintenanceTest),
    SparkStateSetting(P + "snapshotToCleanupThreadRatio", "0.5", AppliedBySpark,
      "The share of maintenance threads that upload snapshots; the rest delete old files (Spark 4.3).",
      "ttlstore's snapshot and cleanup maintenance run in Spark's two pools.", maintenanceTest),
    SparkStateSetting(P + "maintenanceShutdownTimeout", "300000ms", AppliedBySpark,
      "How long Spark waits for maintenance at shutdown.", maintenance, "tests/test_spark_settings.py"),
    SparkStateSetting(P + "maintenanceForceShutdownTimeout", "60000ms", AppliedBySpark,
      "How long Spark waits for cancelled maintenance at shutdown.", maintenance, "tests/test_spark_settings.py"),
    SparkStateSetting(P + "maintenanceProcessingTimeout", "30000ms", AppliedBySpark,
      "How long Spark waits for one partition's maintenance.", maintenance, "tests/test_spark_settings.py"),
    SparkStateSetting(P + "coordinatorReportSnapshotUploadLag", "true", Honoured,
      "The coordinator reports stores whose snapshot uploads lag.", lagReport, lagTest),
    SparkStateSetting(P + "snapshotLagReportInterval", "300000ms", Honoured,
      "Minimum time between the coordinator's lag reports.", lagReport, lagTest),
    SparkStateSetting(P + "multiplierForMinVersionDiffToLog", "5", Honoured,
      "Versions behind before a store counts as lagging.", lagReport, lagTest),
    SparkStateSetting(P + "multiplierForMinTimeDiffToLog", "10", Honoured,
      "Time behind before a store counts as lagging.", lagReport, lagTest),
    SparkStateSetting(P + "maxLaggingStoresToReport", "5", Honoured,
      "Lagging stores the coordinator names per report.", lagReport, lagTest),
    SparkStateSetting(P + "forceSnapshotUploadOnLag", "true", Honoured,
      "A lagging store takes a snapshot at its next commit (Spark 4.2 and later ask through getStore).",
      "ttlstore takes the snapshot Spark asks for at that commit; a store whose SST files still come down " +
        "(lazyLoad.enabled) at its first commit once they are local.", lagTest),
    SparkStateSetting(P + "numStateStoreInstanceMetricsToReport", "5", AppliedBySpark,
      "How many per-store instance metrics (such as each partition's last uploaded snapshot version) " +
        "each operator's progress carries.",
      "Spark 4.3 reports that many of the worst partitions of each of ttlstore's per-store figures, 4.1 and 4.2 " +
        "of its snapshot version (docs/monitoring.md).", "tests/test_store_figures.py"),
    SparkStateSetting(P + "rocksdb.*", "-", NotApplicable,
      "Settings of Spark's RocksDB provider alone.",
      "Not read: ttlstore's own settings above tune its RocksDB; a store logs the rocksdb.* keys it " +
        "ignores once.", "SparkStateSettingsSuite"))

  /** The automatic snapshot repair the settings ask for (Spark's defaults where unset). */
  def snapshotRepair(confs: Map[String, String]): SnapshotRepair =
    SnapshotRepair(
      enabled = read(confs, AutoSnapshotRepairEnabled, "true or false", SnapshotRepair.SparkDefault.enabled)(s =>
        Try(s.toBoolean).toOption),
      attemptsBeforeRepair = read(confs, AutoSnapshotRepairFailures, "a whole number of at least 1",
        SnapshotRepair.SparkDefault.attemptsBeforeRepair)(s => Try(s.toInt).toOption.filter(_ >= 1)),
      maxChangelogReplay = read(confs, AutoSnapshotRepairMaxReplay, "a whole number of at least 1",
        SnapshotRepair.SparkDefault.maxChangelogReplay)(s => Try(s.toInt).toOption.filter(_ >= 1)))

  /** The most versions one cleanup deletes; None: no limit (Spark's -1). */
  def maxVersionsToDelete(confs: Map[String, String]): Option[Int] =
    Some(read(confs, MaxVersionsToDeletePerMaintenance, "-1 (no limit) or a whole number of at least 1", -1)(s =>
        Try(s.toInt).toOption.filter(n => n == -1 || n >= 1))).filter(_ > 0)

  /**
   * Keys of Spark's RocksDB provider that Spark itself pins in every query's offset log and sets again
   * at each restart, whichever the provider: set by no user, so not worth a warning.
   */
  private val PinnedBySpark =
    Set(RocksDbProviderPrefix + "formatVersion", RocksDbProviderPrefix + "mergeOperatorVersion")

  /** The keys of Spark's RocksDB provider a user set in `confs`, which ttlstore does not read. */
  def rocksDbProviderKeys(confs: Map[String, String]): Seq[String] =
    confs.keys.filter(k => k.startsWith(RocksDbProviderPrefix) && !PinnedBySpark(k)).toSeq.sorted

  private def read[T](confs: Map[String, String], key: String, allowed: String, default: T)(
      parse: String => Option[T]): T =
    confs.get(key).fold(default)(raw =>
      parse(raw.trim).getOrElse(throw TtlStoreErrors.invalidConfig(key, raw, allowed)))

  /** The table in docs/configuration.md. */
  def markdownTable: Seq[String] =
    Seq("| Spark setting | Spark's default | ttlstore | what Spark does | what ttlstore does | test |",
      "|---|---|---|---|---|---|") ++
      all.map(s =>
        s"| `${s.key}` | `${s.sparkDefault}` | ${s.handling.text} | ${s.spark} | ${s.ttlstore} | ${s.test} |")
}
