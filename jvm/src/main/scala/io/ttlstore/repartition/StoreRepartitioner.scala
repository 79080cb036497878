package io.ttlstore.repartition

import java.io.{BufferedInputStream, BufferedOutputStream, DataInputStream, DataOutputStream, EOFException, File, FileInputStream, FileOutputStream}

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.ttlstore.checkpoint.{CheckpointFiles, SnapshotUploader, TtlRecord, VersionFile}
import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.errors.RepartitionErrors
import io.ttlstore.ttl.TimestampHistogram
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.local.{CheckpointFormat, LocalCopy}
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * Repartitions one store of one operator: reads version `plan.readVersion` of each of its
 * `fromPartitions` partitions, sends every stored row (key and value as stored, timestamp included,
 * expired or not: TTL is not reset) to the partition [[KeyPartitioner]] gives, and writes each new
 * partition's rows as a snapshot of version `plan.writeVersion`. Rows travel through one spill file
 * per new partition in `workDir`, so memory stays bounded whatever the state's size.
 */
final class StoreRepartitioner(plan: RepartitionPlan, operatorId: Long, store: StoreLayout, hadoopConf: Configuration,
    workDir: File) {
  private val settings = TtlStoreSettings.parse(Map.empty)

  def storeDir(partition: Int): Path = {
    val part = new Path(plan.checkpoint, s"state/$operatorId/$partition")
    if (store.name == "default") part else new Path(part, store.name)
  }

  /** Rows written to each new partition. */
  def run(): Seq[Long] = {
    val spillDir = new File(workDir, s"spill-$operatorId-${store.name}")
    spillDir.mkdirs()
    try {
      val spills = (0 until plan.toPartitions).map(p => new File(spillDir, p.toString))
      val histograms = Seq.fill(plan.toPartitions)(TimestampHistogram.empty())
      val rows = Array.fill(plan.toPartitions)(0L)
      val outs = spills.map(f => new DataOutputStream(new BufferedOutputStream(new FileOutputStream(f), 1 << 16)))
      val records =
        try { (0 until plan.fromPartitions).map(q => readPartition(q, outs, histograms, rows)) }
        finally outs.foreach(_.close())
      val ttl = merged(records)
      (0 until plan.toPartitions).foreach { p =>
        writePartition(p, spills(p), rows(p),
          ttl.map(_.copy(histogramGranularityMs = histograms(p).granularityMs,
              histogram = histograms(p).entries.map { case (b, n) => List(b, n) }.toList)))
        spills(p).delete()
      }
      rows.toSeq
    } finally FileUtils.deleteQuietly(spillDir)
  }

  /** Spills the rows of old partition `q`; returns the TTL record of its version. */
  private def readPartition(q: Int, outs: Seq[DataOutputStream], histograms: Seq[TimestampHistogram],
      rows: Array[Long]): Option[TtlRecord] = {
    val files = new CheckpointFiles(storeDir(q), hadoopConf)
    // A repartition reads and writes format v1 stores (RepartitionPlan refuses a checkpoint with ids).
    val local = new LocalCopy(s"repartition of ${files.storeDir}", new File(workDir, s"read-$q"), settings,
      CheckpointFormat.ByVersion, files, new SnapshotUploader(files))
    try {
      local.load(VersionFile(plan.readVersion, None), loadEmpty = false)
      if (local.legacyRows > 0) throw RepartitionErrors.storeStillUpgrading(files.storeDir.toString, local.legacyRows)
      val partitioner = store.partitioner(plan.toPartitions)
      val it = local.db.newIterator()
      try {
        it.seekToFirst()
        while (it.isValid) {
          val k = it.key()
          val v = it.value()
          val p = partitioner.partitionOf(k)
          val out = outs(p)
          out.writeInt(k.length); out.write(k)
          out.writeInt(v.length); out.write(v)
          histograms(p).add(TimestampedValue.timestamp(v))
          rows(p) += 1
          it.next()
        }
      } finally it.close()
      local.recorded
    } finally local.close()
  }

  private def writePartition(p: Int, spill: File, numRows: Long, ttl: Option[TtlRecord]): Unit = {
    val dbDir = new File(workDir, s"write-$p")
    val checkpointDir = new File(workDir, s"write-$p-checkpoint")
    val db = RocksDbHandle.open(dbDir, store.name, settings)
    try {
      val in = new DataInputStream(new BufferedInputStream(new FileInputStream(spill), 1 << 16))
      val batch = db.newBatch()
      try {
        var more = true
        while (more) {
          val kLen =
            try in.readInt()
            catch { case _: EOFException => -1 }
          if (kLen < 0) more = false
          else {
            val k = new Array[Byte](kLen); in.readFully(k)
            val v = new Array[Byte](in.readInt()); in.readFully(v)
            batch.put(k, v)
            batch.flushIfFull()
          }
        }
        batch.flushTo()
      } finally { batch.close(); in.close() }
      db.checkpointTo(checkpointDir)
      new CheckpointFiles(storeDir(p), hadoopConf).writeSnapshot(VersionFile(plan.writeVersion, None), numRows, ttl,
        checkpointDir,
        Map.empty)
    } finally {
      db.close()
      FileUtils.deleteQuietly(dbDir)
      FileUtils.deleteQuietly(checkpointDir)
    }
  }

  /**
   * The TTL record of the new version: the settings the old partitions recorded, and the latest
   * stream time, watermark and "now" any of them was judged by. Every stored row counts again
   * (`countedFromMs` unset); the histogram is the new partition's own.
   */
  private def merged(records: Seq[Option[TtlRecord]]): Option[TtlRecord] = {
    val known = records.flatten
    def latest(f: TtlRecord => Option[Long]): Option[Long] = known.flatMap(f(_)).reduceOption(_ max _)
    known.headOption.map(_.copy(streamTimeMs = latest(_.streamTimeMs), nowMs = latest(_.nowMs),
        watermarkMs = latest(_.watermarkMs), countedFromMs = None, legacyRows = None))
  }
}
