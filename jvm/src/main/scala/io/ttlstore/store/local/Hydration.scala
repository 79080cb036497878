package io.ttlstore.store.local

import java.io.File
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.internal.Logging
import org.rocksdb.{Env, RocksDBException}

import io.ttlstore.checkpoint.{CheckpointFiles, CheckpointRangedReads, SstDownloads, SstFile}
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.lazyfs.LazyFileSystem
import io.ttlstore.store.rocksdb.{LazyFiles, LocalDiskFull}

/**
 * A snapshot's SST files read from the checkpoint while they come down (issue 51: open first, fetch lazily). Each
 * file is registered with the lazy file system (jvm/src/main/cpp) under its local name, so the DB opens and reads it
 * by ranged reads at once; meanwhile [[SstDownloads]] brings the files down whole, `threads` at a time with the
 * executor's other loads, each checked (size, CRC32C) before it takes its name, and switches each to local as it
 * lands. A file RocksDB no longer needs by then (a compaction's input) is deleted again.
 */
private[local] final class Hydration private (
    fs: LazyFileSystem,
    reads: CheckpointRangedReads,
    pending: SstDownloads.Pending,
    /** The files not brought down yet. */
    left: AtomicInteger,
    /** Each file's local path and its path in the checkpoint. */
    served: Seq[(String, String)],
    version: Long,
    /** Rethrows a download's failure, a full local disk named as one. */
    failed: Throwable => Nothing) extends LazyFiles with Logging {

  override def env: Env = fs.rocksEnv()

  override def allLocal(): Boolean = {
    pending.failure.foreach(failed)
    pending.isDone
  }

  override def awaitLocal(): Unit =
    try pending.await()
    catch { case e: Exception => failed(e) }

  override def named(e: RocksDBException): Option[TtlStoreException] = ServedFileErrors.named(e, version, served)

  override def checkpointReads: CheckpointRangedReads.Served = reads.served

  override def filesNotLocal: Int = left.get()

  /**
   * After the DB closed: skips the downloads not started, waits for those under way, frees the file system. A
   * download that had failed is logged: a store closed before its next version would otherwise never say so (its
   * reads were checked block by block; the damaged or missing file is the checkpoint's).
   */
  override def close(): Unit = {
    pending.failure.foreach(e => logWarning(s"A download of the snapshot of version $version failed", e))
    pending.cancel()
    fs.close()
    reads.close()
  }
}

private[local] object Hydration extends Logging {

  /**
   * Starts serving `ssts` of the snapshot of `version` in `dir` from `files` (each read bounded by `readTimeoutMs`),
   * and bringing them down; a download that fails for want of local space is `store`'s `LOCAL_DISK_FULL`.
   */
  def start(store: String, dir: File, ssts: Seq[SstFile], files: CheckpointFiles, version: Long, threads: Int,
      readTimeoutMs: Long): Hydration = {
    val reads = files.rangedReads(ssts, readTimeoutMs)
    val fs = new LazyFileSystem(reads)
    val targets = ssts.map(sst => new File(dir, sst.localName).getAbsoluteFile)
    targets.zip(ssts).zipWithIndex.foreach { case ((target, sst), i) =>
      fs.serveRemotely(target.getPath, sst.sizeBytes, i.toLong)
    }
    val started = System.nanoTime()
    val left = new AtomicInteger(ssts.size)
    val placed = (target: File) => {
      fs.place(target)
      if (left.decrementAndGet() == 0) {
        logInfo(s"$store: the ${ssts.size} SST files of version $version are local, " +
          s"${(System.nanoTime() - started) / 1000000L} ms after it opened")
      }
    }
    logInfo(s"$store opened version $version before its ${ssts.size} SST files " +
      s"(${ssts.map(_.sizeBytes).sum} bytes) were local; they come down while it reads them from the checkpoint")
    val pending = SstDownloads.start(SstDownloads.downloads(dir, ssts, placed)(files.openSst(_, version)), threads,
      SstDownloads.Background)
    new Hydration(fs, reads, pending, left,
      targets.map(_.getPath).zip(ssts.map(s => files.sstPath(s.dfsName).toString)),
      version, (e: Throwable) => LocalDiskFull.named(store, dir, s"download the snapshot of version $version")(throw e))
  }
}
