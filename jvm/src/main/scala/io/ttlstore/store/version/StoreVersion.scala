package io.ttlstore.store.version

import org.apache.spark.TaskContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.config.ConfigKey
import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.readahead.ReadAheadTargets
import io.ttlstore.spark.{InstanceMetrics, StoreAdapter}
import io.ttlstore.store.version.StoreLifecycle._
import io.ttlstore.store.codec.{KeyCodec, TimestampedValue}
import io.ttlstore.store.local.LocalCopy
import io.ttlstore.store.rocksdb.MemoryFigures
import io.ttlstore.ttl.SystemClock

/**
 * One version of one store, opened for a task: Spark's `StateStore` over [[VersionRows]]. It checks
 * Spark's lifecycle (updating, then committed, aborted or released), encodes keys, refuses what
 * only transformWithState uses, and reports metrics; [[VersionRows]] holds the rows as TTL shows
 * them. What the version needs it got at open ([[VersionSettings]]); it talks to the local copy
 * and never back to its provider.
 *
 * Rows handed in are reused by Spark, so they are encoded (copied) at once.
 */
final class StoreVersion(settings: VersionSettings, local: LocalCopy) extends StoreAdapter with Logging {
  private val rows = new VersionRows(settings, local)
  private val keyCodec = settings.keyCodec
  private var lifecycle: StoreLifecycle = Updating
  private var committed = CommitFigures.Zero
  private var expiredStoredAtCommit: Option[Long] = None

  // A snapshot at this version's commit flushes the memtables first: what earlier versions wrote
  // starts flushing now, in RocksDB's background threads, so that the commit flushes this version's.
  if (settings.snapshotOnCommit && !settings.readOnly) Option(local.db).foreach(_.flushInBackground())

  /** The DB this version opened on (null: none): what the checkpoint served it counts from its open. */
  private val openedOn = local.db

  /**
   * Reading ahead for the task's read-ahead node, found by it while the version is open ([[ReadAheadTargets]]);
   * shared with the other versions of the store the task holds.
   */
  private val readAhead: Option[(ReadAheadTargets.Slot, VersionReadAhead)] =
    for (task <- Option(TaskContext.get()); db <- Option(local.db) if settings.rowTimes.isEmpty) yield {
      val slot = ReadAheadTargets.Slot(settings.storeId, task.taskAttemptId())
      slot -> ReadAheadTargets.join(slot)(new VersionReadAhead(db, keyCodec, local.readAheadUse,
          settings.readAheadThreads, settings.readAheadKey, checkpointReads))
    }
  private var readAheadLeft = false

  /**
   * The checkpoint's reads when the task opened its first version of the store: an aggregation's reads go through
   * the version its restore opens, and Spark reports the metrics of the version its save writes, opened after.
   */
  private val readsAtOpen =
    readAhead.map(_._2).filter(_.reads(local.db)).fold(checkpointReads)(_.checkpointReadsAtFirstOpen)

  private def checkpointReads: CheckpointRangedReads.Served = DbReads.of(openedOn).served

  Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit] { _ =>
    if (lifecycle == Updating) abort()
    endReadAhead()
  })

  override def id: StateStoreId = settings.storeId
  override def version: Long = settings.version

  /** "Now" for this version, fixed so that one batch sees one time. */
  def now: Long = settings.now

  override def toString: String = settings.toString

  override def get(key: UnsafeRow, colFamilyName: String): UnsafeRow = {
    checkFamily(colFamilyName)
    checkOpen("get")
    val stored = timed(rows.read(keyCodec.encode(key), writable))
    if (stored == null) null else valueRow(stored)
  }

  override def keyExists(key: UnsafeRow, colFamilyName: String): Boolean = {
    checkFamily(colFamilyName)
    checkOpen("keyExists")
    timed(rows.read(keyCodec.encode(key), writable, rememberFound = false)) != null
  }

  override def iterator(colFamilyName: String): StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("iterator")
    rows.scan(None, renew = false, () => writable, keyCodec.decode, valueRow)
  }

  override def prefixScan(prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("prefixScan")
    rows.scan(Some(keyCodec.encodePrefix(prefixKey)), renew = settings.policy.refreshesOnRead && writable,
      () => writable, keyCodec.decode, valueRow)
  }

  override def put(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("put")
    require(value != null, "Cannot put a null value")
    rows.put(keyCodec.encode(key), key, value)
  }

  override def remove(key: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("remove")
    rows.remove(keyCodec.encode(key))
  }

  override def commit(): Long = {
    checkWritable("commit")
    endReadAhead()
    val start = System.nanoTime()
    val newVersion = settings.version + 1
    try {
      val wasUpgrading = rows.legacyRows > 0
      val record = rows.prepareCommit()
      local.persistAdoption()
      val bytes = rows.commit(record)
      // As of the commit: maintenance may compact the expired rows away before Spark reads the metrics.
      expiredStoredAtCommit = Some(rows.expiredStored)
      lifecycle = Committed
      if (wasUpgrading && rows.legacyRows == 0) {
        logInfo(s"${settings.storeId} left upgrade mode at version $newVersion: every adopted row is upgraded")
      }
      if (settings.snapshotOnCommit) local.snapshotQuietly(newVersion)
      settings.commitValidation.foreach(conf => CoordinatorBridge.committed(newVersion, id, conf))
      committed = CommitFigures(bytes, (System.nanoTime() - start) / 1000000L, local.takeSnapshotUploads(),
        checkpointReads - readsAtOpen)
      newVersion
    } catch {
      case e: Throwable => throw TtlStoreErrors.commitFailed(toString, newVersion, e)
    }
  }

  /** Undoes an updating version (also after a failed commit); a committed one stays committed. */
  override def abort(): Unit = {
    endReadAhead()
    rows.closeCursors()
    if (lifecycle == Updating) {
      lifecycle = Aborted
      rows.discard()
    }
  }

  override def release(): Unit = {
    endReadAhead()
    rows.closeCursors()
    if (lifecycle == Updating) {
      if (rows.changed) abort() else lifecycle = Released
    }
  }

  override def hasCommitted: Boolean = lifecycle == Committed

  /**
   * The operator's sums (custom metrics) and, on lines that report them, this store's own figures
   * ([[StoreGauges]]: Spark's instance metrics). The snapshot's age is wall time, whatever clock judges expiry.
   */
  override def metrics: StateStoreMetrics = {
    val db = Option(local.db).filterNot(_.isClosed)
    val expiredStored = expiredStoredAtCommit.getOrElse(rows.expiredStored)
    val footprint = local.footprint
    val memory = db.map(_.memoryFigures).getOrElse(MemoryFigures.Zero)
    InstanceMetrics.storeMetrics(rows.rows + rows.legacyRows, memory.usedBytes + local.keyIndex.bytes,
      StoreMetrics.custom(committed, settings.lastLoad, db.map(_.liveSstBytes).getOrElse(0L), rows.expiry,
        expiredStored, rows.legacyRows, rows.upgrades, readAhead.fold(ReadAheadFigures.Zero)(_._2.figures.snapshot),
        footprint, memory),
      settings.storeId, StoreGauges.values(footprint, expiredStored, SystemClock.millis()))
  }

  /**
   * The committed version and, under checkpoint format v2, the checkpoint id it was committed under
   * and the id of the version it was built on: Spark's commit log records them, and the next batch
   * loads that id.
   */
  override def getStateStoreCheckpointInfo(): StateStoreCheckpointInfo =
    StateStoreCheckpointInfo(settings.storeId.partitionId, settings.version + 1,
      settings.checkpointId.filter(_ => hasCommitted), settings.loadedCheckpointId)

  override def allColumnFamilyNames: Set[String] = Set(StoreVersion.DefaultColumnFamily)

  // ---- members that only transformWithState and join state formats 3/4 use ----

  override def createColFamilyIfAbsent(
      colFamilyName: String,
      keySchema: StructType,
      valueSchema: StructType,
      keyStateEncoderSpec: KeyStateEncoderSpec,
      useMultipleValuesPerKey: Boolean,
      isInternal: Boolean): Unit = refuse("column families")
  override def removeColFamilyIfExists(colFamilyName: String): Boolean = refuse("column families")
  override def putList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit =
    refuse("putList")
  override def merge(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit = refuse("merge")
  override def mergeList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit =
    refuse("mergeList")
  override def valuesIterator(key: UnsafeRow, colFamilyName: String): Iterator[UnsafeRow] =
    refuse("multiple values per key")
  override def prefixScanWithMultiValues(
      prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair] =
    refuse("multiple values per key")
  override def iteratorWithMultiValues(colFamilyName: String): StateStoreIterator[UnsafeRowPair] =
    refuse("multiple values per key")

  private def refuse(what: String): Nothing =
    throw TtlStoreErrors.unsupportedByClassicStores(what, ConfigKey.SparkProviderKey)

  /** A read of the operator's, timed while the node reads ahead (no clock read per row otherwise). */
  private def timed[T](read: => T): T = readAhead match {
    case Some((_, target)) if target.readingAhead =>
      val start = System.nanoTime()
      try read
      finally target.figures.operatorReadNanos += System.nanoTime() - start
    case _ => read
  }

  /** This version leaves the read-ahead; the last version of the store in the task drops the keys not read yet. */
  private def endReadAhead(): Unit = if (!readAheadLeft) {
    readAheadLeft = true
    readAhead.foreach { case (slot, target) => if (ReadAheadTargets.leave(slot)) target.stop() }
  }

  private def writable: Boolean = !settings.readOnly && lifecycle == Updating

  private def valueRow(stored: Array[Byte]): UnsafeRow =
    KeyCodec.rowAt(settings.valueFields, stored, TimestampedValue.rowOffset, TimestampedValue.rowLength(stored))

  private def checkFamily(name: String): Unit =
    if (name != StoreVersion.DefaultColumnFamily) refuse(s"the column family '$name'")

  private def checkOpen(operation: String): Unit =
    if (lifecycle == Aborted || lifecycle == Released) {
      throw TtlStoreErrors.storeNotUpdating(operation, toString, lifecycle.name)
    }

  private def checkWritable(operation: String): Unit = {
    if (settings.readOnly) throw TtlStoreErrors.readOnlyStore(operation, toString)
    if (lifecycle != Updating) throw TtlStoreErrors.storeNotUpdating(operation, toString, lifecycle.name)
  }
}

object StoreVersion {

  /**
   * The one column family of a classic operator's store: what Spark 4.x names
   * `StateStore.DEFAULT_COL_FAMILY_NAME` and Spark 3.5, which has no column families, implies.
   */
  val DefaultColumnFamily: String = "default"
}
