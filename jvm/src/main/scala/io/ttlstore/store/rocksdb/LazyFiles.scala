package io.ttlstore.store.rocksdb

import org.rocksdb.{Env, RocksDBException}

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.errors.TtlStoreException

/**
 * The SST files of a DB opened before they were all local (issue 51: open first, fetch lazily): the Env that reads
 * those not yet local from the checkpoint, and whether they all are now. [[RocksDbHandle]] owns it and closes it
 * after its DB.
 */
trait LazyFiles extends AutoCloseable {
  def env: Env

  /** True once every file is local and checked; throws what made one fail to come down, naming the file. */
  def allLocal(): Boolean

  /** Returns once every file is local and checked; throws what made one fail to come down, naming the file. */
  def awaitLocal(): Unit

  /** RocksDB's failure `e` to read a file it read from the checkpoint, named as that checkpoint file; else None. */
  def named(e: RocksDBException): Option[TtlStoreException]

  /** The reads of SST files the checkpoint answered so far (RocksDB's reads of files not local), and their bytes. */
  def checkpointReads: CheckpointRangedReads.Served

  /** The SST files the DB still reads from the checkpoint: not yet brought down, or left there (remote mode). */
  def filesNotLocal: Int
}
