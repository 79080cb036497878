package io.ttlstore

import scala.collection.mutable

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform

import io.ttlstore.StoreLifecycle._

/**
 * One version of one store, opened for a task: reads, and (unless read-only) changes that become
 * version `version + 1` on commit. Every change goes to the local DB and to the version's changelog.
 *
 * TTL is applied here, on every read path: a row stamped `ts` is expired when `ts + ttl <= now`
 * ([[ExpiryRule]]). `now` is fixed for the version: the processing-time clock read once, or in
 * event time the stream time committed by the previous version. Expired rows are hidden (unless
 * the visibility returns them) and, in a write store, removed when accessed; the commit sweeps
 * further rows ([[ExpiredRowSweep]]), unless the DB has the native filter, which drops them while
 * RocksDB compacts. With TTL off, reads only decode the timestamp.
 *
 * Counting: `rows` (numRowsTotal) and the timestamp histogram count the stored rows stamped at or
 * after `countedFrom`. Without the native filter that is every row. With it, the commit forgets
 * the histogram's buckets whose rows are all expired and moves `countedFrom` past them: those rows
 * are invisible and the filter drops them unseen, so they are uncounted at once, and a row met
 * later with an older stamp is removed or overwritten without being counted twice.
 *
 * Rows handed in are reused by Spark, so they are encoded (copied) at once; rows handed out point
 * into fresh byte arrays. Iterators see the rows as of their creation, so the caller may put and
 * remove while iterating.
 */
final class TtlStore(
    context: TtlStore.Context,
    val version: Long,
    readOnly: Boolean,
    forceSnapshotOnCommit: Boolean,
    /** "Now" for this version, fixed so that one batch sees one time. */
    val now: Long,
    /** The TTL settings this version applies: the query's, or for a state reader the recorded ones. */
    policy: TtlPolicy,
    /** A `ttlstore_state` read to tell each scanned row's timestamp (see [[RowTimes]]). */
    rowTimes: Option[RowTimes] = None) extends StateStore {

  private val local = context.local
  private val keyCodec = context.keyCodec
  private val timestamps = local.timestamps
  private var lifecycle: StoreLifecycle = Updating
  private var changelog: ChangelogWriter = _
  private var changed = false
  private var rows = local.numRows
  /** Event time: the largest event time seen so far, committed as the next version's "now". */
  private var streamTime = local.streamTime
  private var countedFrom = local.countedFrom
  private var compactionRequested = 0L
  private val openIterators = mutable.Set.empty[RowCursor]
  /** Rows still in the legacy family; while > 0 the store is in upgrade mode (KIP-258). */
  private var legacyRows = local.legacyRows
  /** The timestamp legacy rows are judged by and keep when upgraded ([[LegacyRowTimestamp]]). */
  private val legacyStamp = local.adoption.map(a =>
    LegacyRowTimestamp.stamp(context.legacyRowTimestamp, a.adoptedAtMs, policy.timeCharacteristic))
    .getOrElse(Long.MaxValue)
  private var upgradedOnAccess = 0L
  private var upgradedByCommit = 0L
  private var committedFigures = TtlStore.CommitFigures(0L, 0L, TtlStore.NoMaintenance)
  private val expiry = new TtlStore.ExpiryFigures()

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
    val stored = readPoint(keyCodec.encode(key))
    if (stored == null) null else valueRow(stored)
  }

  override def keyExists(key: UnsafeRow, colFamilyName: String): Boolean = {
    checkFamily(colFamilyName)
    checkOpen("keyExists")
    readPoint(keyCodec.encode(key)) != null
  }

  override def iterator(colFamilyName: String): StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("iterator")
    scan(None, refresh = false)
  }

  override def prefixScan(prefixKey: UnsafeRow, colFamilyName: String)
      : StateStoreIterator[UnsafeRowPair] = {
    checkFamily(colFamilyName)
    checkOpen("prefixScan")
    scan(Some(keyCodec.encodePrefix(prefixKey)), refresh = policy.refreshesOnRead)
  }

  // ---- changes ----

  override def put(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("put")
    require(value != null, "Cannot put a null value")
    val k = keyCodec.encode(key)
    val ts = stamp(key, value)
    val v = TimestampedValue.allocate(ts, value.getSizeInBytes)
    value.writeToMemory(v, Platform.BYTE_ARRAY_OFFSET + TimestampedValue.rowOffset)
    write(k, v, ts)
  }

  override def remove(key: UnsafeRow, colFamilyName: String): Unit = {
    checkFamily(colFamilyName)
    checkWritable("remove")
    val k = keyCodec.encode(key)
    val old = storedTimestamp(k)
    if (!KnownKeys.isAbsent(old)) delete(k, old)
    else if (legacyRows > 0 && local.db.getLegacy(k) != null) deleteLegacy(k)
  }

  override def commit(): Long = {
    checkWritable("commit")
    val start = System.nanoTime()
    val newVersion = version + 1
    try {
      closeIterators()
      val wasUpgrading = legacyRows > 0
      upgradeSome()
      if (local.usesFilter) forgetExpired()
      else sweep(full = forceSnapshotOnCommit || context.snapshotDue(newVersion))
      expiry.byFilter = local.takeFilterRemoved()
      val record = TtlRecord(policy, Some(streamTime).filter(_ != Long.MinValue), timestamps,
        Some(countedFrom).filter(_ != Long.MinValue), Some(now), Some(legacyRows).filter(_ > 0))
      local.persistAdoption()
      val bytes = changelogWriter().commit(rows, record)
      local.committed(newVersion, rows, record)
      lifecycle = Committed
      if (wasUpgrading && legacyRows == 0) context.leftUpgradeMode(newVersion)
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
      StoreMetrics.SstBytes -> safeDb(_.liveSstBytes),
      StoreMetrics.ExpiredRemovedOnAccess -> expiry.onAccess,
      StoreMetrics.ExpiredRemovedBySweep -> expiry.bySweep,
      StoreMetrics.ExpiredRemovedBeforeSnapshot -> expiry.beforeSnapshot,
      StoreMetrics.SweepRowsExamined -> expiry.examined,
      StoreMetrics.ExpiredRemovedByFilter -> expiry.byFilter,
      StoreMetrics.CompactionsRequested -> compactionRequested,
      StoreMetrics.ExpiredRowsStored -> timestamps.certainlyExpired(policy.ttlMs, now),
      StoreMetrics.LegacyRowsRemaining -> legacyRows,
      StoreMetrics.RowsUpgradedOnAccess -> upgradedOnAccess,
      StoreMetrics.RowsUpgradedByCommit -> upgradedByCommit)
    StateStoreMetrics(rows + legacyRows, safeDb(_.memoryUsedBytes), custom)
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

  /**
   * The timestamp of the key's stored row, expired or not, or [[KnownKeys.Absent]]: from this
   * version's earlier reads if known, else from RocksDB.
   */
  private def storedTimestamp(k: Array[Byte]): java.lang.Long = {
    val known = local.knownKeys.lookup(k)
    if (known != null) known
    else {
      val stored = if (local.db.mayExist(k)) local.db.get(k) else null
      remember(k, stored)
    }
  }

  private def remember(k: Array[Byte], stored: Array[Byte]): java.lang.Long =
    if (stored == null) { local.knownKeys.recordAbsent(k); KnownKeys.Absent }
    else {
      val ts = TimestampedValue.timestamp(stored)
      local.knownKeys.record(k, ts)
      java.lang.Long.valueOf(ts)
    }

  /**
   * A point read: the stored value if visible, else null. An expired row is removed in a write
   * store (unless the visibility returns it); a visible one is renewed with OnReadAndWrite.
   */
  private def readPoint(k: Array[Byte]): Array[Byte] = {
    val stored = local.db.get(k)
    if (stored == null && legacyRows > 0) {
      val plain = local.db.getLegacy(k)
      if (plain != null) return readLegacy(k, plain)
    }
    remember(k, stored)
    if (stored == null || !policy.enabled) stored
    else {
      val ts = TimestampedValue.timestamp(stored)
      if (ExpiryRule.isExpired(ts, policy.ttlMs, now)) {
        if (policy.returnsExpired) stored
        else {
          if (writable) { delete(k, ts); expiry.onAccess += 1 }
          null
        }
      } else {
        if (policy.refreshesOnRead && writable) renew(k, stored, ts) else stored
      }
    }
  }

  /**
   * A legacy row met by a point read, judged by the legacy stamp. A write store upgrades it (moves
   * it to the timestamped family, renewed with OnReadAndWrite), or removes it if expired.
   */
  private def readLegacy(k: Array[Byte], plain: Array[Byte]): Array[Byte] = {
    val ts = legacyStamp
    val stored = TimestampedValue.encode(ts, plain, 0, plain.length)
    if (policy.enabled && ExpiryRule.isExpired(ts, policy.ttlMs, now)) {
      if (policy.returnsExpired) stored
      else {
        if (writable) { deleteLegacy(k); expiry.onAccess += 1 }
        null
      }
    } else if (writable) {
      val fresh = if (policy.refreshesOnRead) math.max(ts, now) else ts
      val v = if (fresh == ts) stored else TimestampedValue.encode(fresh, plain, 0, plain.length)
      write(k, v, fresh)
      upgradedOnAccess += 1
      v
    } else stored
  }

  /**
   * The bounded upgrade at commit: up to `upgradeRowsPerCommit` legacy rows move to the
   * timestamped family (expired ones are removed), logged like any write, so that upgrade mode
   * ends even for keys never touched.
   */
  private def upgradeSome(): Unit = if (legacyRows > 0 && context.upgradeRowsPerCommit > 0) {
    val it = local.db.newLegacyIterator()
    try {
      // Resume after the rows upgraded before, not over their tombstones from the first key on.
      local.upgradeCursor match {
        case Some(key) => it.seek(key)
        case None => it.seekToFirst()
      }
      var n = 0
      while (it.isValid && n < context.upgradeRowsPerCommit) {
        val k = it.key()
        if (policy.enabled && ExpiryRule.isExpired(legacyStamp, policy.ttlMs, now)) {
          deleteLegacy(k)
          expiry.bySweep += 1
        } else {
          val plain = it.value()
          write(k, TimestampedValue.encode(legacyStamp, plain, 0, plain.length), legacyStamp)
          upgradedByCommit += 1
        }
        n += 1
        it.next()
      }
      local.upgradeCursor = if (it.isValid) Some(it.key()) else None
    } finally it.close()
  }

  /** OnReadAndWrite: the row read gets the current time (in event time: never an older one). */
  private def renew(k: Array[Byte], stored: Array[Byte], ts: Long): Array[Byte] = {
    val fresh = math.max(ts, now)
    if (fresh == ts) stored
    else {
      val v = TimestampedValue.encode(fresh, stored, TimestampedValue.rowOffset,
        TimestampedValue.rowLength(stored))
      write(k, v, fresh)
      v
    }
  }

  /** The timestamp a put gives its row: now, or in event time the row's own event time. */
  private def stamp(key: UnsafeRow, value: UnsafeRow): Long = context.eventTime match {
    case None => now
    case Some(column) =>
      val ts = column.millis(key, value) match {
        case EventTimeColumn.NoTime => math.max(streamTime, now)
        case t => t
      }
      if (ts > streamTime) streamTime = ts
      ts
  }

  private def write(k: Array[Byte], v: Array[Byte], ts: Long): Unit = {
    val old = storedTimestamp(k)
    if (!KnownKeys.isAbsent(old)) uncount(old)
    else if (legacyRows > 0 && local.db.getLegacy(k) != null) {
      // Upgraded: the key leaves the legacy family (a replay of this put does the same).
      local.db.deleteLegacy(k)
      legacyRows -= 1
    }
    if (ts >= countedFrom) { rows += 1; timestamps.add(ts) }
    local.db.put(k, v)
    changelogWriter().put(k, v)
    local.knownKeys.record(k, ts)
  }

  private def delete(k: Array[Byte], ts: Long): Unit = {
    uncount(ts)
    local.db.delete(k)
    changelogWriter().delete(k)
    local.knownKeys.recordAbsent(k)
  }

  /** Removes a legacy row (the logged delete removes it from both families on replay). */
  private def deleteLegacy(k: Array[Byte]): Unit = {
    local.db.deleteLegacy(k)
    legacyRows -= 1
    changelogWriter().delete(k)
    local.knownKeys.recordAbsent(k)
  }

  private def uncount(ts: Long): Unit = if (ts >= countedFrom) { rows -= 1; timestamps.remove(ts) }

  /**
   * With the native filter: uncounts the rows certainly expired (whole histogram buckets), and asks
   * maintenance to compact once those since the last request reach `compactExpiredShare` of the
   * stored rows (at least [[TtlStore.MinRowsToCompact]]): the filter then sees every file.
   */
  private def forgetExpired(): Unit = if (policy.enabled) {
    val (dropped, below) = timestamps.dropExpired(policy.ttlMs, now)
    rows -= dropped
    below.foreach(b => countedFrom = math.max(countedFrom, b))
    local.expiredSinceCompaction += dropped
    val expired = local.expiredSinceCompaction
    val share = context.compactExpiredShare
    if (share > 0 && expired >= TtlStore.MinRowsToCompact && expired >= share * (rows + expired)) {
      local.compactionWanted = true
      local.expiredSinceCompaction = 0L
      compactionRequested += 1
    }
  }

  /** Removes expired rows before the commit: a bounded sweep, or all of them before a snapshot. */
  private def sweep(full: Boolean): Unit =
    if (policy.enabled && (full || context.sweepRowsPerCommit > 0) &&
        timestamps.mayHaveExpired(policy.ttlMs, now)) {
      val result = ExpiredRowSweep.run(local.db,
        if (full) None else local.sweepCursor,
        if (full) Long.MaxValue else context.sweepRowsPerCommit.toLong,
        ts => ExpiryRule.isExpired(ts, policy.ttlMs, now),
        (k, ts) => delete(k, ts))
      local.sweepCursor = result.resumeAt
      expiry.examined += result.examined
      if (full) expiry.beforeSnapshot += result.removed else expiry.bySweep += result.removed
    }

  private def writable: Boolean = !readOnly && lifecycle == Updating

  private def valueRow(stored: Array[Byte]): UnsafeRow =
    KeyCodec.rowAt(context.valueFields, stored, TimestampedValue.rowOffset,
      TimestampedValue.rowLength(stored))

  private def changelogWriter(): ChangelogWriter = {
    if (changelog == null) changelog = context.newChangelog(version + 1)
    changed = true
    changelog
  }

  private def scan(prefix: Option[Array[Byte]], refresh: Boolean): StateStoreIterator[UnsafeRowPair] = {
    val it: RowCursor =
      if (legacyRows > 0) new RowCursor.Merged(local.db.newIterator(), local.db.newLegacyIterator(), legacyStamp)
      else new RowCursor.Current(local.db.newIterator())
    openIterators += it
    val hides = policy.enabled && !policy.returnsExpired
    val rows = new StoreScan(it, prefix,
      hidden = ts => hides && ExpiryRule.isExpired(ts, policy.ttlMs, now),
      onHidden = (k, ts, legacy) => if (writable) {
        if (legacy) deleteLegacy(k) else delete(k, ts)
        expiry.onAccess += 1
      },
      present = (k, v) => {
        val shown = if (refresh) renew(k, v, TimestampedValue.timestamp(v)) else v
        rowTimes.foreach(_.writtenAt = TimestampedValue.timestamp(shown))
        shown
      },
      decodeKey = keyCodec.decode,
      decodeValue = valueRow,
      onEnd = () => closeOne(it))
    new StateStoreIterator(rows, () => closeOne(it))
  }

  private def closeOne(it: RowCursor): Unit = if (openIterators.remove(it)) it.close()

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
    /** Event time: reads a row's event time; None in processing time. */
    def eventTime: Option[EventTimeColumn]
    def sweepRowsPerCommit: Int
    /** With the native filter: the expired share of the stored rows that triggers a compaction. */
    def compactExpiredShare: Double
    def legacyRowTimestamp: LegacyRowTimestamp
    def upgradeRowsPerCommit: Int
    /** The commit of `version` upgraded or removed the last legacy row. */
    def leftUpgradeMode(version: Long): Unit
    /** Whether committing `version` takes a snapshot (expired rows are then all removed first). */
    def snapshotDue(version: Long): Boolean
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
  /** Expired rows this version removed, by path, and rows the sweep examined. */
  final class ExpiryFigures {
    var onAccess = 0L
    var bySweep = 0L
    var beforeSnapshot = 0L
    var examined = 0L
    var byFilter = 0L
  }
  /** Fewer expired rows than this never trigger a compaction (not worth rewriting files for). */
  val MinRowsToCompact = 1000L
  final case class MaintenanceFigures(snapshots: Long, bytes: Long, latencyMs: Long)
  val NoMaintenance: MaintenanceFigures = MaintenanceFigures(0L, 0L, 0L)

  def unsupported(what: String): TtlStoreException = TtlStoreErrors.unsupportedOperation(what,
    "it is used only by transformWithState and stream-stream join state formats 3/4, which " +
      "Spark 4.3 runs only on its own RocksDBStateStoreProvider.")
}
