package io.ttlstore.migrate

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.json4s.{DefaultFormats, Formats, JObject, JString}
import org.json4s.jackson.{JsonMethods, Serialization}

import io.ttlstore.compat.Parse
import io.ttlstore.config.{ConfigKey, SparkStateSettings}
import io.ttlstore.errors.{MigrationErrors, TtlStoreErrors}
import io.ttlstore.spark.SparkClasses.CheckpointFileManager

/** What `migrate` found and did (or, with a dry run, would do). */
final case class MigrationReport(
    checkpoint: String,
    batch: Long,
    provider: String,
    operators: Seq[OperatorFacts],
    /** "migrated", "would migrate", "already migrated", "rolled back", "would roll back". */
    action: String,
    uncommittedBatch: Option[Long] = None,
    notes: Seq[String] = Nil)

/**
 * Moves a stopped query's checkpoint from Spark's own state store provider to ttlstore (and back).
 *
 * Spark pins the provider class in the checkpoint's offset log, so a query keeps its provider for
 * life. `migrate` rewrites that pin in the latest offset-log entry, keeping the original in
 * `<checkpoint>/ttlstore-migration/`; on restart ttlstore adopts the state Spark's provider left
 * without rewriting it (docs/migration.md). `rollback` puts the pin back while no batch has run on
 * ttlstore. Every file is read and written through Hadoop's FileSystem API and Spark's
 * CheckpointFileManager, so any checkpoint URI Spark accepts works; Hadoop's checksum files
 * (`.<name>.crc`) follow the files they check.
 */
object CheckpointMigration {
  private implicit val formats: Formats = DefaultFormats

  val HdfsProvider = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
  val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /** Where migrate keeps its backup and record, inside the checkpoint (Spark ignores the directory). */
  val BackupDir = "ttlstore-migration"
  private val JoinFormatKey = "spark.sql.streaming.join.stateFormatVersion"

  private final case class Record(batch: Long, from: String, committed: Boolean, migratedAtMs: Long)

  def run(checkpoint: String, dryRun: Boolean, rollback: Boolean, force: Boolean, hadoopConf: Configuration)
      : MigrationReport = {
    val facts = new CheckpointFacts(new Path(checkpoint), hadoopConf)
    val batches = facts.batches(facts.offsets)
    if (batches.isEmpty) {
      throw TtlStoreErrors.notACheckpoint(checkpoint, missing = s"${facts.offsets} with batch files")
    }
    if (rollback) undo(checkpoint, facts, dryRun, hadoopConf)
    else migrate(checkpoint, facts, batches.last, dryRun, force, hadoopConf)
  }

  private def migrate(checkpoint: String, facts: CheckpointFacts, latest: Long, dryRun: Boolean, force: Boolean,
      hadoopConf: Configuration): MigrationReport = {
    val entryPath = new Path(facts.offsets, latest.toString)
    val (lines, metadata) = facts.entry(entryPath)
    val conf = (metadata \ "conf").extractOpt[Map[String, String]].getOrElse(Map.empty)
    val provider = conf.get(ConfigKey.SparkProviderKey)
    val operators = facts.operators()
    val report = MigrationReport(checkpoint, latest, provider.getOrElse("(not recorded)"), operators, "would migrate")
    if (provider.contains(ConfigKey.ProviderClass)) return report.copy(action = "already migrated")
    if (!provider.exists(Set(HdfsProvider, RocksDbProvider))) {
      throw MigrationErrors.unknownProvider(entryPath.toString, provider.getOrElse("None"),
        Seq(HdfsProvider, RocksDbProvider))
    }
    refuseUnservable(checkpoint, facts, operators, conf)
    val committed = facts.batches(facts.commits).contains(latest)
    val checked =
      if (committed) report
      else {
        if (!force && !dryRun) throw MigrationErrors.uncommittedBatch(checkpoint, latest)
        report.copy(uncommittedBatch = Some(latest),
          notes = Seq(s"batch $latest has offsets but no commit: on " +
            s"restart it runs again, on ttlstore, from the state of batch ${latest - 1}"))
      }
    if (dryRun) return checked
    val backup = new Path(facts.root, BackupDir)
    facts.fs.mkdirs(backup)
    val original = facts.readText(entryPath)
    write(new Path(backup, s"offsets-$latest"), original, hadoopConf)
    write(new Path(backup, "migration.json"),
      Serialization.write(Record(latest, provider.get, committed, System.currentTimeMillis())) + "\n", hadoopConf)
    val pinned = metadata.mapField {
      case ("conf", JObject(fields)) =>
        "conf" -> JObject(fields.map { case (k, v) =>
          if (k == ConfigKey.SparkProviderKey) k -> JString(ConfigKey.ProviderClass) else k -> v
        })
      case other => other
    }
    write(entryPath, lines.updated(1, JsonMethods.compact(pinned)).mkString("\n"), hadoopConf)
    checked.copy(action = "migrated")
  }

  private def undo(
      checkpoint: String, facts: CheckpointFacts, dryRun: Boolean, hadoopConf: Configuration): MigrationReport = {
    val backup = new Path(facts.root, BackupDir)
    val recordFile = new Path(backup, "migration.json")
    if (!facts.fs.exists(recordFile)) throw MigrationErrors.notMigrated(checkpoint, recordFile.toString)
    val record = Serialization.read[Record](facts.readText(recordFile))
    val after = facts.batches(facts.offsets).filter(_ > record.batch)
    val ranUncommitted = !record.committed && facts.batches(facts.commits).contains(record.batch)
    val ran = after ++ (if (ranUncommitted) Seq(record.batch) else Nil)
    val adopted = facts.ttlstoreStores()
    if (ran.nonEmpty || adopted.nonEmpty) {
      throw MigrationErrors.alreadyRanOnTtlstore(checkpoint, ran.headOption.getOrElse(record.batch),
        adopted.headOption.map(a => s"ttlstore state in $a").getOrElse("offsets after the migrated batch"))
    }
    val report = MigrationReport(checkpoint, record.batch, record.from, facts.operators(), "would roll back")
    if (dryRun) return report
    write(new Path(facts.offsets, record.batch.toString), facts.readText(new Path(backup, s"offsets-${record.batch}")),
      hadoopConf)
    facts.fs.delete(backup, true)
    report.copy(action = "rolled back")
  }

  private def refuseUnservable(checkpoint: String, facts: CheckpointFacts, operators: Seq[OperatorFacts],
      conf: Map[String, String]): Unit = {
    operators.foreach { op =>
      val name = op.name.getOrElse("").toLowerCase
      if (name.contains("transformwithstate")) {
        throw MigrationErrors.unsupportedOperator(op.id,
          "transformWithState, which Spark 4.3 runs only on its own " +
            "RocksDBStateStoreProvider; this query cannot move to ttlstore.")
      }
      if (name.contains("join") && conf.get(JoinFormatKey).flatMap(Parse.int).getOrElse(2) >= 3) {
        throw MigrationErrors.unsupportedOperator(op.id,
          s"a stream-stream join with state format " +
            s"${conf(JoinFormatKey)} ($JoinFormatKey), which needs column families; ttlstore serves join state format 2 only.")
      }
    }
    if (conf.get(SparkStateSettings.RowChecksumEnabled).exists(_.trim.equalsIgnoreCase("true"))) {
      throw MigrationErrors.rowChecksums(checkpoint, SparkStateSettings.RowChecksumEnabled)
    }
    val written = math.max(conf.get(ConfigKey.SparkCheckpointFormatKey).flatMap(Parse.int).getOrElse(1),
      facts.checkpointFormat())
    if (written != 1)
      throw MigrationErrors.unsupportedCheckpoint(checkpoint, written, ConfigKey.SparkCheckpointFormatKey)
  }

  /** Writes `path` atomically (its checksum file with it, where the file system keeps one). */
  private def write(path: Path, text: String, hadoopConf: Configuration): Unit = {
    val out = CheckpointFileManager.create(path.getParent, hadoopConf).createAtomic(path, overwriteIfPossible = true)
    try out.write(text.getBytes(StandardCharsets.UTF_8))
    catch { case e: Throwable => out.cancel(); throw e }
    out.close()
  }
}
