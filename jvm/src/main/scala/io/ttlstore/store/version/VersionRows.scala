package io.ttlstore.store.version

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.{StateStoreIterator, UnsafeRowPair}
import org.apache.spark.unsafe.Platform

import io.ttlstore.checkpoint.{TtlRecord, VersionFile}
import io.ttlstore.ttl.{EventTimeColumn, LegacyRowTimestamp, TtlRules}
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.local.LocalCopyView

/**
 * The rows of one opened store version as TTL shows them, over bytes: point reads, scans, puts and
 * removes, and what a commit does before it seals the changelog.
 *
 * A row stamped `ts` is expired when `ts + ttl <= now` ([[TtlRules]]); `now` is fixed for the
 * version. Expired rows are hidden (unless the visibility returns them) and, in a write store,
 * removed when accessed. The commit sweeps further rows ([[ExpiredRowSweep]]), unless the DB has the
 * native filter, which drops them while RocksDB compacts; then the commit uncounts them instead
 * ([[RowCounter]]). Legacy rows (an adopted checkpoint's) are reached through [[RowAccess]] and
 * judged by the legacy stamp; a write store upgrades those it reads.
 *
 * Values handed out point into fresh byte arrays. Scans see the rows as of their creation, so the
 * caller may put and remove while scanning.
 */
final class VersionRows(settings: VersionSettings, local: LocalCopyView) {
  private val rules = new TtlRules(settings.policy, settings.now)

  /** The timestamp legacy rows are judged by and keep when upgraded ([[LegacyRowTimestamp]]). */
  private val legacyStamp = local.adoption.map(a =>
    LegacyRowTimestamp.stamp(settings.legacyRowTimestamp,
      a.adoptedAtMs, settings.policy.timeCharacteristic)).getOrElse(Long.MaxValue)
  private val access = RowAccess.open(local.db, local.legacyRows, legacyStamp)
  private val counter = new RowCounter(local.numRows, local.timestamps, local.countedFrom)
  private val writer = new VersionWriter(local.db, access, counter, local.knownKeys, local.keyIndex,
    () => local.newChangelog(VersionFile(settings.version + 1, settings.checkpointId), settings.changelogCodec))

  /** Event time: the largest event time seen so far, committed as the next version's "now". */
  private var streamTime = local.streamTime
  private var sweepCursor = local.sweepResumesAt
  private var upgradeCursor = local.upgradeResumesAt
  private val openCursors = mutable.Set.empty[RowCursor]

  val expiry = new ExpiryFigures()
  val upgrades = new UpgradeFigures()

  def rows: Long = counter.rows
  def legacyRows: Long = access.legacyRows
  def changed: Boolean = writer.changed

  /** Expired rows still stored: those still counted, and with the native filter those uncounted but not dropped yet. */
  def expiredStored: Long =
    counter.timestamps.certainlyExpired(settings.policy.ttlMs, settings.now) +
      (if (local.usesFilter) local.expiredOnDisk else 0L)

  /**
   * A point read: the stored value if visible, else null. In a write store an expired row is
   * removed (unless the visibility returns it), a visible one is renewed with OnReadAndWrite, and a
   * legacy row is upgraded.
   *
   * What the read found is remembered for a later write of the key ([[KnownKeys]]); `rememberFound`
   * false remembers only absent keys, for callers that do not write a key they found
   * (deduplication's `keyExists`: at 4M keys per store, remembering every duplicate took 15-20% of
   * its time). A write of such a key then looks it up again.
   */
  def read(k: Array[Byte], writable: Boolean, rememberFound: Boolean = true): Array[Byte] = {
    val current = if (local.keyIndex.certainlyAbsent(k)) null else local.db.get(k)
    val legacy = if (current == null) access.legacy(k) else null
    if (legacy == null && (current == null || rememberFound)) writer.remember(k, current)
    val stored = if (current != null) current else legacy
    if (stored == null || (!rules.enabled && legacy == null)) stored
    else {
      val ts = TimestampedValue.timestamp(stored)
      if (rules.isExpired(ts)) {
        if (settings.policy.returnsExpired) stored
        else {
          if (writable) removeExpired(k, ts, legacy != null)
          null
        }
      } else if (!writable) stored
      else {
        val fresh = rules.afterRead(ts)
        if (legacy != null) upgrades.onAccess += 1
        if (fresh == ts && legacy == null) stored
        else {
          val v = if (fresh == ts) stored else restamped(stored, fresh)
          writer.write(k, v, fresh)
          v
        }
      }
    }
  }

  def put(k: Array[Byte], key: UnsafeRow, value: UnsafeRow): Unit = {
    val ts = stamp(key, value)
    val v = TimestampedValue.allocate(ts, value.getSizeInBytes)
    value.writeToMemory(v, Platform.BYTE_ARRAY_OFFSET + TimestampedValue.rowOffset)
    writer.write(k, v, ts)
  }

  def remove(k: Array[Byte]): Unit = writer.remove(k)

  /**
   * Every row, or those under `prefix`, in key order. Hidden rows are removed if `writable()`;
   * `renew` renews the rows handed out (OnReadAndWrite prefix scans of write stores).
   */
  def scan(prefix: Option[Array[Byte]], renew: Boolean, writable: () => Boolean,
      decodeKey: Array[Byte] => UnsafeRow, decodeValue: Array[Byte] => UnsafeRow): StateStoreIterator[UnsafeRowPair] = {
    val it = access.cursor()
    openCursors += it
    val pairs = new StoreScan(it, prefix,
      hidden = rules.hides,
      onHidden = (k, ts, legacy) =>
        if (writable()) removeExpired(k, ts, legacy),
      present = (k, v) => {
        val shown = if (renew) renewed(k, v) else v
        settings.rowTimes.foreach(_.writtenAt = TimestampedValue.timestamp(shown))
        shown
      },
      decodeKey = decodeKey,
      decodeValue = decodeValue,
      onEnd = () => closeCursor(it))
    new StateStoreIterator(pairs, () => closeCursor(it))
  }

  /**
   * Everything a commit does before its changelog is sealed: the bounded upgrade of legacy rows,
   * then uncounting (native filter) or sweeping expired rows. Returns the version's TTL record.
   */
  def prepareCommit(): TtlRecord = {
    closeCursors()
    upgradeSome()
    if (local.usesFilter) forgetExpired() else sweep(full = settings.snapshotOnCommit)
    expiry.byFilter = local.takeFilterRemoved()
    TtlRecord(settings.policy, Some(streamTime).filter(_ != Long.MinValue), counter.timestamps,
      Some(counter.countedFrom).filter(_ != Long.MinValue), Some(settings.now),
      Some(access.legacyRows).filter(_ > 0), Some(settings.now).filter(_ => settings.judgedByWatermark))
  }

  /** Seals the changelog; returns its bytes. The local copy then holds `version + 1`. */
  def commit(record: TtlRecord): Long = {
    val bytes = writer.commit(counter.rows, record)
    local.committed(settings.version + 1, counter.rows, record, sweepCursor, upgradeCursor)
    bytes
  }

  /** Drops what this version changed: its changelog, and (if it changed it) the local copy's trust. */
  def discard(): Unit = {
    closeCursors()
    writer.cancel()
    if (writer.changed) local.invalidate()
  }

  def closeCursors(): Unit = {
    openCursors.foreach(_.close())
    openCursors.clear()
  }

  private def closeCursor(it: RowCursor): Unit = if (openCursors.remove(it)) it.close()

  private def remove(k: Array[Byte], ts: Long, legacy: Boolean): Unit =
    if (legacy) writer.deleteLegacy(k) else writer.delete(k, ts)

  /**
   * Removes an expired row a read met. With the native filter an earlier commit may have uncounted
   * it already ([[RowCounter.forgetExpired]]): it is then not counted as leaving numRowsTotal again,
   * so that ttlstoreRowsExpired adds up with numRowsTotal.
   */
  private def removeExpired(k: Array[Byte], ts: Long, legacy: Boolean): Unit = {
    remove(k, ts, legacy)
    expiry.onAccess += 1
    if (!legacy && ts < counter.countedFrom) expiry.onAccessUncounted += 1
  }

  /** OnReadAndWrite for a row a scan hands out: it gets the current time (never an older one). */
  private def renewed(k: Array[Byte], stored: Array[Byte]): Array[Byte] = {
    val ts = TimestampedValue.timestamp(stored)
    val fresh = rules.afterRead(ts)
    if (fresh == ts) stored
    else {
      val v = restamped(stored, fresh)
      writer.write(k, v, fresh)
      v
    }
  }

  private def restamped(stored: Array[Byte], ts: Long): Array[Byte] =
    TimestampedValue.encode(ts, stored, TimestampedValue.rowOffset, TimestampedValue.rowLength(stored))

  /** The timestamp a put gives its row: now, or in event time the row's own event time. */
  private def stamp(key: UnsafeRow, value: UnsafeRow): Long = settings.eventTime match {
    case None => settings.now
    case Some(column) =>
      val ts = column.millis(key, value) match {
        case EventTimeColumn.NoTime => math.max(streamTime, settings.now)
        case t => t
      }
      if (ts > streamTime) streamTime = ts
      ts
  }

  /**
   * The bounded upgrade: up to `upgradeRowsPerCommit` legacy rows move to the timestamped family
   * (expired ones are removed), logged like any write, so that upgrade mode ends even for keys
   * never touched.
   */
  private def upgradeSome(): Unit =
    upgradeCursor = access.upgradeSome(upgradeCursor, settings.upgradeRowsPerCommit) { (k, plain) =>
      if (rules.isExpired(legacyStamp)) {
        writer.deleteLegacy(k)
        expiry.bySweep += 1
      } else {
        writer.write(k, TimestampedValue.encode(legacyStamp, plain, 0, plain.length), legacyStamp)
        upgrades.byCommit += 1
      }
    }

  /**
   * With the native filter: uncounts the rows certainly expired, and asks maintenance to compact
   * once enough have expired (see [[LocalCopy.expiredUncounted]]): the filter then sees every file.
   */
  private def forgetExpired(): Unit = if (rules.enabled) {
    val dropped = counter.forgetExpired(settings.policy.ttlMs, settings.now)
    expiry.uncounted += dropped
    if (local.expiredUncounted(dropped, counter.rows, settings.compactExpiredShare)) {
      expiry.compactionsRequested += 1
    }
  }

  /** Removes expired rows before the commit: a bounded sweep, or all of them before a snapshot. */
  private def sweep(full: Boolean): Unit =
    if (rules.enabled && (full || settings.sweepRowsPerCommit > 0) &&
      counter.timestamps.mayHaveExpired(settings.policy.ttlMs, settings.now)) {
      val result = ExpiredRowSweep.run(local.db,
        if (full) None else sweepCursor,
        if (full) Long.MaxValue else settings.sweepRowsPerCommit.toLong,
        rules.isExpired,
        (k, ts) => writer.delete(k, ts))
      sweepCursor = result.resumeAt
      expiry.examined += result.examined
      if (full) expiry.beforeSnapshot += result.removed else expiry.bySweep += result.removed
    }
}
