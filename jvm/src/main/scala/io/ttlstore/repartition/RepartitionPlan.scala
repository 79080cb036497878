package io.ttlstore.repartition

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.sql.types.StructType
import org.json4s.{DefaultFormats, Formats, JValue}

import io.ttlstore
  .checkpoint.{AdoptionRecord, CheckpointFiles, CommitLog, OperatorMetadata, SparkCheckpoint, StoreMetadata, VersionFile}
import io.ttlstore.compat.Parse
import io.ttlstore.config.ConfigKey
import io.ttlstore.errors.{RepartitionErrors, TtlStoreErrors}

/** One store of an operator and how its keys map to partitions ([[KeyPartitioner]]). */
final case class StoreLayout(name: String, keySchema: StructType, numColsPrefixKey: Int, hashedColumns: Int) {
  def partitioner(numPartitions: Int): KeyPartitioner =
    new KeyPartitioner(keySchema, numColsPrefixKey, hashedColumns, numPartitions)
}

final case class OperatorLayout(id: Long, name: String, stores: Seq[StoreLayout])

/**
 * What `ttlstore repartition` does to a stopped query's checkpoint, decided from its files before
 * anything is written, with the semantics of Spark 4.3's `OfflineStateRepartitionRunner`: batch
 * `batch` (the one after the last committed) re-plans the last committed batch's offsets with
 * `spark.sql.shuffle.partitions` = `toPartitions` and commits, as state version `writeVersion`,
 * every row of version `readVersion` in the partition Spark's shuffle now sends its key to.
 * `retry`: that batch was started by an earlier repartition to the same count that did not finish.
 */
final case class RepartitionPlan(
    checkpoint: String,
    lastCommittedBatch: Long,
    batch: Long,
    retry: Boolean,
    fromPartitions: Int,
    toPartitions: Int,
    operators: Seq[OperatorLayout]) {
  def readVersion: Long = lastCommittedBatch + 1
  def writeVersion: Long = batch + 1
}

object RepartitionPlan {
  private implicit val formats: Formats = DefaultFormats
  private val ShufflePartitionsKey = "spark.sql.shuffle.partitions"
  private val StrictDistributionKey = "spark.sql.streaming.statefulOperator.useStrictDistribution"

  /** The classic operators (operator metadata names) whose state is partitioned by their key. */
  val Supported: Set[String] = Set("stateStoreSave", "dedupe", "dedupeWithinWatermark", "flatMapGroupsWithState",
    "applyInPandasWithState", "sessionWindowStateStoreSaveExec", "symmetricHashJoin")

  /** Right (the plan), or Left(current partition count) when the state already has `toPartitions`. */
  def read(checkpoint: String, toPartitions: Int, hadoopConf: Configuration): Either[Int, RepartitionPlan] = {
    if (toPartitions <= 0) throw RepartitionErrors.invalidPartitionCount(toPartitions)
    val root = new Path(checkpoint)
    val fs = root.getFileSystem(hadoopConf)
    val offsets = new Path(root, "offsets")
    val batches = numbered(fs, offsets)
    if (batches.isEmpty) throw TtlStoreErrors.notACheckpoint(checkpoint, missing = s"$offsets with batch files")
    val committed = numbered(fs, new Path(root, "commits"))
    if (committed.isEmpty) throw RepartitionErrors.noCommittedBatch(checkpoint)
    val lastBatch = batches.max
    val lastCommitted = committed.max
    def entry(b: Long): JValue = {
      val file = new Path(offsets, b.toString)
      if (!fs.exists(file)) throw RepartitionErrors.offsetEntryMissing(checkpoint, b)
      offsetEntry(fs, file)
    }
    val committedEntry = entry(lastCommitted)
    val fromPartitions = shufflePartitions(committedEntry, checkpoint, lastCommitted)
    val retry = lastBatch > lastCommitted && {
      val last = shufflePartitions(entry(lastBatch), checkpoint, lastBatch)
      if (lastBatch == lastCommitted + 1 && last != fromPartitions) {
        if (last != toPartitions)
          throw RepartitionErrors.repartitionUnfinished(checkpoint, lastBatch, last, toPartitions)
        true
      } else throw RepartitionErrors.uncommittedBatch(checkpoint, lastBatch, lastCommitted)
    }
    val provider = (committedEntry \ "conf" \ ConfigKey.SparkProviderKey).extractOpt[String]
    if (!provider.contains(ConfigKey.ProviderClass))
      throw RepartitionErrors.repartitionOtherProvider(checkpoint, provider.getOrElse("(not recorded)"))
    if ((committedEntry \ "conf" \ StrictDistributionKey).extractOpt[String].contains("false")) {
      throw RepartitionErrors.repartitionUnsupportedCheckpoint(checkpoint,
        s"it was started before Spark 3.3 ($StrictDistributionKey=false): its state may be partitioned by " +
          "fewer columns than its key, which cannot be told from the files")
    }
    if (SparkCheckpoint.formatVersion(fs, root) == 2) {
      throw RepartitionErrors.repartitionUnsupportedCheckpoint(checkpoint,
        "it is in state checkpoint format v2 (its commit log names checkpoint ids); ttlstore repartitions " +
          "format v1 checkpoints")
    }
    if (!retry && fromPartitions == toPartitions) Left(fromPartitions)
    else {
      val stateDir = new Path(root, "state")
      val operators = numbered(fs, stateDir).map(op => operator(fs, root, op, hadoopConf))
      for (op <- operators; store <- op.stores; p <- 0 until fromPartitions) {
        refuseLegacyRows(root, op.id, store.name, p, lastCommitted + 1, hadoopConf)
      }
      Right(RepartitionPlan(checkpoint, lastCommitted, lastCommitted + 1, retry, fromPartitions, toPartitions,
          operators))
    }
  }

  /**
   * The repartition this tool left unfinished in `checkpoint`, as (batch, its partition count): the
   * offset log's last batch has no commit and another `spark.sql.shuffle.partitions` than the batch
   * before it (an ordinary batch never changes the count). Spark 4.2 and later find it themselves
   * when a query restarts; [[io.ttlstore.QueryStartCheck]] asks this on earlier lines.
   */
  def unfinished(checkpoint: String, hadoopConf: Configuration): Option[(Long, Int)] = {
    val root = new Path(checkpoint)
    val fs = root.getFileSystem(hadoopConf)
    val offsets = new Path(root, "offsets")
    numbered(fs, offsets).sorted.takeRight(2) match {
      case Seq(before, last) if last == before + 1 && !fs.exists(new Path(root, s"commits/$last")) =>
        val count = (b: Long) =>
          (offsetEntry(fs, new Path(offsets, b.toString)) \ "conf" \ ShufflePartitionsKey)
            .extractOpt[String].flatMap(Parse.int)
        (count(before), count(last)) match {
          case (Some(a), Some(b)) if a != b => Some(last -> b)
          case _ => None
        }
      case _ => None
    }
  }

  private def operator(fs: FileSystem, root: Path, id: Long, hadoopConf: Configuration): OperatorLayout = {
    val dir = new Path(root, s"state/$id")
    val file = SparkCheckpoint.operatorMetadataFile(dir).toString
    val meta =
      try SparkCheckpoint.operatorMetadata(fs, dir)
      catch { case NonFatal(e) => throw RepartitionErrors.repartitionUnsupportedCheckpoint(file, e.getMessage) }
    val OperatorMetadata(version, name, storeInfo) =
      meta.getOrElse(throw RepartitionErrors.operatorMetadataMissing(file))
    if (version != "v1" || name.isEmpty) {
      throw RepartitionErrors.repartitionUnsupportedOperator(root.toString, id, name.getOrElse(s"(metadata $version)"))
    }
    if (!Supported(name.get)) throw RepartitionErrors.repartitionUnsupportedOperator(root.toString, id, name.get)
    val stores = storeInfo.map { case StoreMetadata(store, prefix) =>
      // numPartitions is not read: Spark writes this metadata (v1) when the query first starts and
      // never updates it, so after a repartition it names the count the query started with.
      val keySchema = StateSchemaFile.keySchema(root, id, store, hadoopConf)
      val hashed =
        if (prefix > 0) prefix
        else if (store.endsWith("-keyWithIndexToValue") && CommitLog.JoinStores.contains(store)) keySchema.length - 1
        else keySchema.length
      StoreLayout(store, keySchema, prefix, hashed)
    }
    OperatorLayout(id, name.get, stores)
  }

  /**
   * An adopted store that still holds rows in Spark's provider's format ([[StoreRepartitioner]]
   * reads only ttlstore's) is refused before anything is written.
   */
  private def refuseLegacyRows(root: Path, operatorId: Long, store: String, partition: Int, version: Long,
      hadoopConf: Configuration): Unit = {
    val part = new Path(root, s"state/$operatorId/$partition")
    val files = new CheckpointFiles(if (store == "default") part else new Path(part, store), hadoopConf)
    val fs = files.root.getFileSystem(hadoopConf)
    if (fs.exists(new Path(files.root, AdoptionRecord.FileName))) {
      val record = files.recordedTtl(VersionFile(version, None)).orElse(
        try files.readManifest(VersionFile(version, None)).ttl
        catch { case NonFatal(_) => None })
      record.flatMap(_.legacyRows).filter(_ > 0).foreach { n =>
        throw RepartitionErrors.storeStillUpgrading(files.storeDir.toString, n)
      }
    }
  }

  private def shufflePartitions(entry: JValue, checkpoint: String, batch: Long): Int =
    (entry \ "conf" \ ShufflePartitionsKey).extractOpt[String].flatMap(Parse.int)
      .getOrElse(throw RepartitionErrors.repartitionUnsupportedCheckpoint(checkpoint,
          s"its offset log entry of batch $batch records no $ShufflePartitionsKey (written before Spark 2.1?)"))

  private def offsetEntry(fs: FileSystem, file: Path): JValue = {
    val (version, json) = readLogFile(fs, file)
    if (version != "v1") {
      throw RepartitionErrors.repartitionUnsupportedCheckpoint(file.getParent.getParent.toString,
        s"its offset log entry $file is in format $version; ttlstore reads format v1")
    }
    json
  }

  /** A log file of Spark's (offsets, commits, operator metadata): version line, then JSON. */
  private def readLogFile(fs: FileSystem, file: Path): (String, JValue) =
    try SparkCheckpoint.versionAndJson(fs, file)
    catch { case NonFatal(e) => throw RepartitionErrors.repartitionUnsupportedCheckpoint(file.toString, e.getMessage) }

  private def numbered(fs: FileSystem, dir: Path): Seq[Long] = SparkCheckpoint.batchIds(fs, dir)
}
