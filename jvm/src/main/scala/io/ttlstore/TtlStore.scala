package io.ttlstore

import scala.collection.mutable

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform
import org.rocksdb.RocksIterator

import io.ttlstore.StoreLifecycle._

/**
 * One version of one store, opened for a task: reads, and (unless read-only) changes that become
 * version `version + 1` on commit. Every change goes to the local DB and to the version's changelog.
 *
 * Rows handed in are reused by Spark, so they are encoded (copied) at once; rows handed out point
 * into fresh byte arrays. Iterators see the rows as of their creation, so the caller may put and
 * remove while iterating.
 */
final class TtlStore(
    context: TtlStore.Context,
    val version: Long,
    readOnly: Boolean,
    forceSnapshotOnCommit: Boolean) extends StateStore {

  private val local = context.local
  private val keyCodec = context.keyCodec
  private var lifecycle: StoreLifecycle = Updating
  private var changelog: ChangelogWriter = _
  private var changed = false
  private var rows = local.numRows
  /** "Now" for this version: taken once, so that one batch sees one time. */
  private val now = context.clock.millis()
  private val openIterators = mutable.Set.empty[RocksIterator]
  private var committedFigures = TtlStore.CommitFigures(0L, 0L, TtlStore.NoMaintenance)

  Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit] { _ =>
    if (lifecycle == Updating) abort()
  })

  override def id: StateStoreId = context.storeId

  override def toString: String =
    s"TtlStore[${context.storeId}, version=$version${if (readOnly) ", read-only" else ""}]"

  // ---- reads ----

  override def get(key: UnsafeRow, colFamilyName: String): UnsafeRow = {
    checkFamily(colFamilyName)
    checkOpen("get")
    val k = keyCodec.encode(key)
    val stored = local.db.get(k)
    local.knownKeys.record(k, stored != null)
    if (stored == null) null else valueRow(stored)
  }

  override def keyExists(key: UnsafeRow, colFamilyName: String): Boolean = {
    checkFamily(colFamilyName)
    checkOpen("keyExists")
    exists(keyCodec.encode(key))
  }

  override def iterator(colFamilyName: String): StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("iterator")
    scan(None)
  }

  override def prefixScan(prefixKey: UnsafeRow, colFamilyName: String)
      : StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("prefixScan")
    scan(Some(keyCodec.encodePrefix(prefixKey)))
  }

  // ---- changes ----

  override def put(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("put")
    require(value != null, "Cannot put a null value")
    val k = keyCodec.encode(key)
    val v = TimestampedValue.allocate(now, value.getSizeInBytes)
    value.writeToMemory(v, Platform.BYTE_ARRAY_OFFSET + TimestampedValue.rowOffset)
    if (!exists(k)) rows += 1
    local.db.put(k, v)
    changelogWriter().put(k, v)
    local.knownKeys.record(k, exists = true)
  }

  override def remove(key: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("remove")
    val k = keyCodec.encode(key)
    if (exists(k)) {
      rows -= 1
      local.db.delete(k)
      changelogWriter().delete(k)
      local.knownKeys.record(k, exists = false)
    }
  }

  override def commit(): Long = {
    checkWritable("commit")
    val start = System.nanoTime()
    val newVersion = version + 1
    try {
      closeIterators()
      val bytes = changelogWriter().commit(rows)
      local.committed(newVersion, rows)
      lifecycle = Committed
      context.afterCommit(newVersion, forceSnapshotOnCommit)
      context.reportCommit(newVersion)
      committedFigures = TtlStore.CommitFigures(bytes, (System.nanoTime() - start) / 1000000L,
        context.takeMaintenanceFigures())
      newVersion
    } catch {
      case e: Throwable =>
        throw TtlStoreErrors.commitFailed(toString, newVersion, e)
    }
  }

  /** Undoes an updating version (also after a failed commit); a committed one stays committed. */
  override def abort(): Unit = {
    closeIterators()
    if (lifecycle == Updating) {
      lifecycle = Aborted
      if (changelog != null) changelog.cancel()
      if (changed) local.invalidate()
    }
  }

  override def release(): Unit = {
    closeIterators()
    if (lifecycle == Updating) {
      if (changed) abort() else lifecycle = Released
    }
  }

  override def hasCommitted: Boolean = lifecycle == Committed

  override def metrics: StateStoreMetrics = {
    val maintenance = committedFigures.maintenance
    val custom: Map[StateStoreCustomMetric, Long] = Map(
      StoreMetrics.CommitLatencyMs -> committedFigures.latencyMs,
      StoreMetrics.ChangelogBytes -> committedFigures.changelogBytes,
      StoreMetrics.LoadLatencyMs -> context.lastLoad.latencyMs,
      StoreMetrics.ChangelogsReplayed -> context.lastLoad.changelogsReplayed.toLong,
      StoreMetrics.SnapshotsUploaded -> maintenance.snapshots,
      StoreMetrics.SnapshotUploadLatencyMs -> maintenance.latencyMs,
      StoreMetrics.SnapshotBytesUploaded -> maintenance.bytes,
      StoreMetrics.SstBytes -> safeDb(_.liveSstBytes))
    StateStoreMetrics(rows, safeDb(_.memoryUsedBytes), custom)
  }

  override def getStateStoreCheckpointInfo(): StateStoreCheckpointInfo =
    StateStoreCheckpointInfo(context.storeId.partitionId, version + 1, None, None)

  override def allColumnFamilyNames: Set[String] = Set(StateStore.DEFAULT_COL_FAMILY_NAME)

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
  override def merge(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit =
    refuse("merge")
  override def mergeList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit =
    refuse("mergeList")
  override def valuesIterator(key: UnsafeRow, colFamilyName: String): Iterator[UnsafeRow] =
    refuse("multiple values per key")
  override def prefixScanWithMultiValues(prefixKey: UnsafeRow, colFamilyName: String)
      : StateStoreIterator[UnsafeRowPair] = refuse("multiple values per key")
  override def iteratorWithMultiValues(colFamilyName: String): StateStoreIterator[UnsafeRowPair] =
    refuse("multiple values per key")

  // ---- helpers ----

  private def refuse(what: String): Nothing = throw TtlStore.unsupported(what)

  /** Whether the key exists: from this version's earlier reads if known, else from RocksDB. */
  private def exists(k: Array[Byte]): Boolean = local.knownKeys.lookup(k) match {
    case KnownKeys.Exists => true
    case KnownKeys.Absent => false
    case _ =>
      val found = local.db.mayExist(k) && local.db.get(k) != null
      local.knownKeys.record(k, found)
      found
  }

  private def valueRow(stored: Array[Byte]): UnsafeRow =
    KeyCodec.rowAt(context.valueFields, stored, TimestampedValue.rowOffset,
      TimestampedValue.rowLength(stored))

  private def changelogWriter(): ChangelogWriter = {
    if (changelog == null) changelog = context.newChangelog(version + 1)
    changed = true
    changelog
  }

  private def scan(prefix: Option[Array[Byte]]): StateStoreIterator[UnsafeRowPair] = {
    val it = local.db.newIterator()
    openIterators += it
    prefix match {
      case Some(p) => it.seek(p)
      case None => it.seekToFirst()
    }
    val pair = new UnsafeRowPair()
    val rowsIterator = new Iterator[UnsafeRowPair] {
      private var open = true
      override def hasNext: Boolean = open && {
        val valid = it.isValid && prefix.forall(p => startsWith(it.key(), p))
        if (!valid) closeOne(it)
        open = valid
        valid
      }
      override def next(): UnsafeRowPair = {
        if (!hasNext) throw new NoSuchElementException("no more rows")
        val key = keyCodec.decode(it.key())
        val value = valueRow(it.value())
        it.next()
        pair.withRows(key, value)
      }
    }
    new StateStoreIterator(rowsIterator, () => closeOne(it))
  }

  private def startsWith(bytes: Array[Byte], prefix: Array[Byte]): Boolean =
    bytes.length >= prefix.length &&
      java.util.Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length)

  private def closeOne(it: RocksIterator): Unit = if (openIterators.remove(it)) it.close()

  private def closeIterators(): Unit = {
    openIterators.foreach(_.close())
    openIterators.clear()
  }

  private def safeDb(f: RocksDbHandle => Long): Long =
    Option(local.db).filterNot(_.isClosed).map(f).getOrElse(0L)

  private def checkFamily(name: String): Unit =
    if (name != StateStore.DEFAULT_COL_FAMILY_NAME) refuse(s"the column family '$name'")

  private def checkOpen(operation: String): Unit =
    if (lifecycle == Aborted || lifecycle == Released) {
      throw TtlStoreErrors.storeNotUpdating(operation, toString, lifecycle.name)
    }

  private def checkWritable(operation: String): Unit = {
    if (readOnly) throw TtlStoreErrors.readOnlyStore(operation, toString)
    if (lifecycle != Updating) throw TtlStoreErrors.storeNotUpdating(operation, toString, lifecycle.name)
  }
}

object TtlStore {
  /** What a store version needs from its provider. */
  trait Context {
    def storeId: StateStoreId
    def local: LocalStore
    def keyCodec: KeyCodec
    def valueFields: Int
    def clock: Clock
    def newChangelog(version: Long): ChangelogWriter
    def afterCommit(version: Long, forceSnapshot: Boolean): Unit
    /** Tells Spark's coordinator that this store committed (it validates each batch's commits). */
    def reportCommit(version: Long): Unit
    def lastLoad: LoadFigures
    def takeMaintenanceFigures(): MaintenanceFigures
  }

  /** What a commit did, and the maintenance finished since the previous commit. */
  final case class CommitFigures(changelogBytes: Long, latencyMs: Long, maintenance: MaintenanceFigures)
  final case class LoadFigures(latencyMs: Long, changelogsReplayed: Int)
  final case class MaintenanceFigures(snapshots: Long, bytes: Long, latencyMs: Long)
  val NoMaintenance: MaintenanceFigures = MaintenanceFigures(0L, 0L, 0L)

  def unsupported(what: String): TtlStoreException = TtlStoreErrors.unsupportedOperation(what,
    "it is used only by transformWithState and stream-stream join state formats 3/4, which " +
      "Spark 4.3 runs only on its own RocksDBStateStoreProvider.")
}
