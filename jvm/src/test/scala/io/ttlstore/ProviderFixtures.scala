package io.ttlstore

import java.io.{File, RandomAccessFile}

import org.apache.spark.sql.execution.streaming.state.{StateStoreConf, StateStoreProvider}
import org.scalatest.Assertions.intercept

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.CheckpointFiles
import io.ttlstore.config.SparkStateSettings.AutoSnapshotRepairEnabled
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.rocksdb.RocksDbHandle
import io.ttlstore.ttl.ManualClock

/** What the provider suites share: a ttlstore provider, its directories, commits, and damage done to files. */
object ProviderFixtures {

  def ttlProvider(
      dir: File, conf: StateStoreConf = storeConf(), clock: Option[ManualClock] = None): TtlStateStoreProvider =
    newProvider(TtlProvider, dir, conf, clock = clock).asInstanceOf[TtlStateStoreProvider]

  /** A store's directory is `<checkpoint root>/<operator>/<partition>`. */
  def storeDir(dir: File): File = new File(dir, "0/0")
  def ttlDir(dir: File): File = new File(storeDir(dir), CheckpointFiles.DirName)

  def filesBelow(dir: File): Seq[String] = {
    val base = dir.toPath
    java.nio.file.Files.walk(base).toArray.map(_.asInstanceOf[java.nio.file.Path])
      .filter(p => p.toFile.isFile).map(p => base.relativize(p).toString).toSeq.sorted
  }

  /** Commits versions 1..n, each adding one key, with maintenance after version `snapshotAt`. */
  def commitMany(p: StateStoreProvider, n: Int, snapshotAt: Int = -1): Unit =
    (0 until n).foreach { v =>
      commitVersion(p, v, (s"k$v", 0) -> Some(v.toLong))
      if (v + 1 == snapshotAt) p.doMaintenance()
    }

  def loadError(dir: File, version: Long, settings: (String, String)*): TtlStoreException =
    withProvider(ttlProvider(dir, storeConf(settings: _*))) { fresh =>
      intercept[TtlStoreException](fresh.getStore(version))
    }

  def flipByte(file: File, at: Long): Unit = {
    val f = new RandomAccessFile(file, "rw")
    try { f.seek(at); val b = f.read(); f.seek(at); f.write(b ^ 0xff) }
    finally f.close()
  }

  /** The block-based table options of the timestamped family, as RocksDB wrote them in its OPTIONS file. */
  def tableOptions(p: TtlStateStoreProvider): Map[String, String] =
    RocksDbOptionsFile.section(p.localStore.db.dir,
      s"""TableOptions/BlockBasedTable "${RocksDbHandle.TimestampedFamily}"""")

  val noRepair = AutoSnapshotRepairEnabled -> "false"

  def truncate(file: File): Unit = {
    val f = new RandomAccessFile(file, "rw")
    try f.setLength(10)
    finally f.close()
  }
}
