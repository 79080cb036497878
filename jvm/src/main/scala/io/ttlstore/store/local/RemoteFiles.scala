package io.ttlstore.store.local

import java.io.File
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.rocksdb.{Env, RocksDBException}

import io.ttlstore.checkpoint.{CheckpointFiles, CheckpointRangedReads, SstFile}
import io.ttlstore.compat.CollectionConverters._
import io.ttlstore.errors.TtlStoreException
import io.ttlstore.store.lazyfs.LazyFileSystem
import io.ttlstore.store.rocksdb.LazyFiles

/**
 * A store's SST files in remote mode (`remote.localCacheMB`: state larger than the local disk). The DB opens on the
 * lazy file system (jvm/src/main/cpp) in remote mode: the snapshot's files it does not hold locally are read from the
 * checkpoint by ranged reads and never brought down, and the files RocksDB writes are local until a snapshot has
 * uploaded them. Then [[LocalSstCache]] may demote them, least recently read first: the file system reads each from
 * its checkpoint copy from then on, and the local file is deleted. RocksDB compacts as usual (reading remote inputs
 * block by block, each block's checksum checked), and a local checkpoint of the DB holds a marker in place of each
 * remote file, which the snapshot's upload references as the checkpoint's own.
 *
 * @param inCheckpoint the SST files the checkpoint holds of this DB's lineage, by local name ([[SnapshotUploader]]'s)
 */
private[local] final class RemoteFiles private (
    fs: LazyFileSystem,
    reads: CheckpointRangedReads,
    files: CheckpointFiles,
    dir: File,
    version: Long,
    inCheckpoint: () => Map[String, SstFile]) extends LazyFiles with LocalSstCache.Member {

  /** The checkpoint's path of each file read remotely, by local path (to name a read that fails). */
  private val remote = new ConcurrentHashMap[String, String]()

  override def env: Env = fs.rocksEnv()

  /** Nothing is brought down: compactions and snapshots never wait. */
  override def allLocal(): Boolean = true

  override def awaitLocal(): Unit = ()

  override def named(e: RocksDBException): Option[TtlStoreException] =
    ServedFileErrors.named(e, version, remote.asScala)

  /** The DB's local SST files, each with its checkpoint copy (if it has one of its size) and when it was last read. */
  override def localFiles: Seq[LocalSstCache.Local] = {
    val known = inCheckpoint()
    Option(dir.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".sst")).map { f =>
      val bytes = f.length()
      LocalSstCache.Local(this, f, bytes, known.get(f.getName).filter(_.sizeBytes == bytes),
        fs.lastRead(f.getAbsolutePath))
    }
  }

  override def demote(local: LocalSstCache.Local): Boolean = local.copy.exists { sst =>
    val checkpoint = files.sstPath(sst.dfsName)
    val path = local.file.getAbsolutePath
    remote.put(path, checkpoint.toString)
    val demoted =
      try fs.demote(path, sst.sizeBytes, reads.add(checkpoint -> sst.sizeBytes))
      catch { case NonFatal(_) => false } // closed meanwhile
    if (demoted) local.file.delete() else remote.remove(path)
    demoted
  }

  override def close(): Unit = {
    LocalSstCache.unregister(this)
    fs.close()
    reads.close()
  }
}

private[local] object RemoteFiles {

  /**
   * Opens `dir` in remote mode: `ssts` of the snapshot of `version` (those not local) are read from `files`, each
   * read bounded by `readTimeoutMs`; the executor's stores keep about `budgetBytes` of SST files locally.
   */
  def start(dir: File, ssts: Seq[SstFile], files: CheckpointFiles, version: Long, readTimeoutMs: Long,
      budgetBytes: Long, inCheckpoint: () => Map[String, SstFile]): RemoteFiles = {
    val reads = files.rangedReads(Nil, readTimeoutMs)
    val fs = new LazyFileSystem(reads, true)
    val opened = new RemoteFiles(fs, reads, files, dir, version, inCheckpoint)
    ssts.foreach { sst =>
      val path = new File(dir, sst.localName).getAbsolutePath
      val checkpoint = files.sstPath(sst.dfsName)
      opened.remote.put(path, checkpoint.toString)
      fs.serveRemotely(path, sst.sizeBytes, reads.add(checkpoint -> sst.sizeBytes))
    }
    LocalSstCache.register(opened, budgetBytes)
    opened
  }
}
