package io.ttlstore.store.local

import java.io.File
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.rocksdb.{Env, RocksDBException}

import io.ttlstore.checkpoint.{CheckpointFiles, CheckpointRangedReads, SstDownloads, SstFile}
import io.ttlstore.compat.CollectionConverters._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.lazyfs.LazyFileSystem
import io.ttlstore.store.rocksdb.LazyFiles

/**
 * A store's SST files in remote mode (`remote.localCacheMB`: state larger than the local disk). The DB opens on the
 * lazy file system (jvm/src/main/cpp) in remote mode: the snapshot's files it does not hold locally are read from the
 * checkpoint by ranged reads, and the files RocksDB writes are local. [[LocalSstCache]] keeps the executor's local
 * SST files near its budget: after a snapshot upload it demotes the least recently read local files whose copy the
 * checkpoint holds (the file system reads each from its checkpoint copy from then on, and the local file is deleted),
 * and it fills the room left with the most recently read remote files, brought down whole and checked (size,
 * CRC32C) before the file system switches them to local. RocksDB compacts as usual (reading remote inputs block by
 * block, each block's checksum checked), and a local checkpoint of the DB holds a marker in place of each remote
 * file, which the snapshot's upload references as the checkpoint's own.
 *
 * @param inCheckpoint the SST files the checkpoint holds of this DB's lineage, by local name ([[SnapshotUploader]]'s)
 */
private[local] final class RemoteFiles private (
    fs: LazyFileSystem,
    reads: CheckpointRangedReads,
    files: CheckpointFiles,
    dir: File,
    version: Long,
    threads: Int,
    inCheckpoint: () => Map[String, SstFile]) extends LazyFiles with LocalSstCache.Member with Logging {
  import RemoteFiles.{Promotion, Served}

  /**
   * Every file the file system was given a checkpoint copy of, by local path (to name a read that fails, and to bring
   * it down); an entry goes when RocksDB has deleted the file.
   */
  private val served = new ConcurrentHashMap[String, Served]()

  /** The files being brought down, by local path; and their downloads, each with its file (cancelled at close). */
  private val promoting = new ConcurrentHashMap[String, Promotion]()
  private val downloads = new ConcurrentHashMap[SstDownloads.Pending, (String, Promotion)]()
  @volatile private var closed = false

  override def env: Env = fs.rocksEnv()

  /** Nothing is brought down before a compaction or a snapshot: they never wait. */
  override def allLocal(): Boolean = true

  override def awaitLocal(): Unit = ()

  override def named(e: RocksDBException): Option[TtlStoreException] =
    ServedFileErrors.named(e, version, served.asScala.map { case (local, s) => local -> s.checkpoint })

  override def checkpointReads: CheckpointRangedReads.Served = reads.served

  /** The files served from their checkpoint copy that RocksDB still holds and that are not local (yet). */
  override def filesNotLocal: Int =
    served.keySet().asScala.count(path => fs.lastRead(path) >= 0 && !new File(path).exists())

  /** The DB's local SST files, each with its checkpoint copy (if it has one of its size) and when it was last read. */
  override def localFiles: Seq[LocalSstCache.Local] = {
    val known = inCheckpoint()
    Option(dir.listFiles()).toSeq.flatten
      .filter(f => f.getName.endsWith(".sst") && !promoting.containsKey(f.getAbsolutePath)).map { f =>
        val bytes = f.length()
        LocalSstCache.Local(this, f, bytes, known.get(f.getName).filter(_.sizeBytes == bytes),
          fs.lastRead(f.getAbsolutePath))
      }
  }

  /** The files read from the checkpoint now; forgets those RocksDB has deleted. */
  override def remoteFiles: Seq[LocalSstCache.Remote] =
    served.asScala.toSeq.flatMap { case (path, s) =>
      val lastRead = fs.lastRead(path)
      if (lastRead < 0) { forget(path, s); None }
      else {
        val file = new File(path)
        if (file.exists() || promoting.containsKey(path)) None
        else Some(LocalSstCache.Remote(this, file, s.sst, lastRead))
      }
    }

  override def promotingBytes: Long = {
    sweep()
    promoting.values().asScala.map(_.bytes).sum
  }

  override def demote(local: LocalSstCache.Local): Boolean = local.copy.exists { sst =>
    val path = local.file.getAbsolutePath
    val known = Option(served.get(path)).filter(_.sst == sst)
    val s = known.getOrElse(serve(path, sst))
    val demoted =
      try fs.demote(path, sst.sizeBytes, s.id)
      catch { case NonFatal(_) => false } // closed meanwhile
    if (demoted) local.file.delete() else if (known.isEmpty) forget(path, s)
    demoted
  }

  /**
   * Brings `remote` down in the background (checked against its size and CRC32C); the file system reads it locally
   * once it is in place, unless RocksDB deleted it meanwhile (the copy is then deleted again).
   */
  override def promote(remote: LocalSstCache.Remote): Unit = {
    val path = remote.file.getAbsolutePath
    val promotion = new Promotion(remote.sst.sizeBytes)
    if (!closed && promoting.putIfAbsent(path, promotion) == null) {
      val placed = (target: File) =>
        try fs.place(target)
        finally { promoting.remove(path, promotion); () }
      val download = SstDownloads.downloads(dir, Seq(remote.sst), placed)(files.openSst(_, version))
      downloads.put(SstDownloads.start(download, threads, SstDownloads.Background), (path, promotion))
    }
  }

  /** Forgets the downloads that ended: a file whose download failed stays remote, and may be chosen again. */
  private def sweep(): Unit = downloads.asScala.foreach { case (pending, (path, promotion)) =>
    if (pending.isDone && downloads.remove(pending) != null) {
      promoting.remove(path, promotion)
      pending.failure.foreach { e =>
        logWarning(s"Remote mode: bringing $path down failed; it is read from the checkpoint", e)
      }
    }
  }

  /** Numbers the checkpoint copy of the local file at `path` for ranged reads. */
  private def serve(path: String, sst: SstFile): Served = {
    val checkpoint = files.sstPath(sst.dfsName)
    val s = Served(sst, checkpoint.toString, reads.add(checkpoint -> sst.sizeBytes))
    Option(served.put(path, s)).filter(_.id != s.id).foreach(old => reads.remove(old.id))
    s
  }

  private def forget(path: String, s: Served): Unit = if (served.remove(path, s)) reads.remove(s.id)

  override def close(): Unit = {
    LocalSstCache.unregister(this)
    LocalSstCache.synchronized { closed = true } // no fill under way starts a download after this
    downloads.keySet().asScala.foreach(_.cancel())
    fs.close()
    reads.close()
  }
}

private[local] object RemoteFiles {

  /** A file being brought down, of `bytes` bytes (one object per download: a later one of the same file is another). */
  private final class Promotion(val bytes: Long)

  /** A checkpoint copy the file system reads: the file, its path in the checkpoint, its number in the ranged reads. */
  private final case class Served(sst: SstFile, checkpoint: String, id: Long)

  /**
   * Opens `dir` in remote mode: `ssts` of the snapshot of `version` (those not local) are read from `files`, each
   * read bounded by `readTimeoutMs`; the executor's stores keep about `budgetBytes` of SST files locally, brought
   * down `threads` at a time with the executor's other loads.
   */
  def start(dir: File, ssts: Seq[SstFile], files: CheckpointFiles, version: Long, readTimeoutMs: Long,
      budgetBytes: Long, threads: Int, inCheckpoint: () => Map[String, SstFile]): RemoteFiles = {
    val reads = files.rangedReads(Nil, readTimeoutMs)
    val fs = new LazyFileSystem(reads, true)
    val opened = new RemoteFiles(fs, reads, files, dir, version, threads, inCheckpoint)
    ssts.foreach { sst =>
      val path = new File(dir, sst.localName).getAbsolutePath
      fs.serveRemotely(path, sst.sizeBytes, opened.serve(path, sst).id)
    }
    LocalSstCache.register(opened, budgetBytes)
    opened
  }
}
