package io.ttlstore.store.local

import org.rocksdb.{RocksDBException, Status}

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.errors.{StorageErrors, TtlStoreErrors, TtlStoreException}

/** RocksDB's failures to read SST files it read from the checkpoint, named as the checkpoint's files. */
private[local] object ServedFileErrors {

  /**
   * `e` named as the checkpoint file of the first of `served` (a local path and its checkpoint copy) whose local path
   * its message names: a damaged block `SST_CORRUPTED`, a file gone `SST_MISSING`, any other failed read
   * `CHECKPOINT_READ_FAILED`; None when it names none.
   */
  def named(e: RocksDBException, version: Long, served: Iterable[(String, String)]): Option[TtlStoreException] = {
    val message = Option(e.getMessage).getOrElse("")
    served.collectFirst { case (local, checkpoint) if message.contains(local) => checkpoint }.map { checkpoint =>
      if (Option(e.getStatus).exists(_.getCode == Status.Code.Corruption)) {
        TtlStoreErrors.sstCorrupted(checkpoint, version, message)
      } else if (message.contains(CheckpointRangedReads.Missing)) TtlStoreErrors.sstMissing(checkpoint, version)
      else StorageErrors.checkpointReadFailed(checkpoint, e)
    }
  }
}
