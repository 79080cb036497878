package io.ttlstore.store.version

import io.ttlstore.checkpoint.{ChangelogWriter, TtlRecord}
import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.local.{KnownKeys, KeyIndex}
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * The changes of one store version: every write and delete goes to the local DB and to the
 * version's changelog (created on the first change), keeps the row count exact, and tells
 * [[KnownKeys]] what became of the key, and [[KeyIndex]] of each new key. A write of a legacy key upgrades it: the key leaves the
 * legacy family, and replaying the logged put does the same.
 */
final class VersionWriter(
    db: RocksDbHandle,
    access: RowAccess,
    counter: RowCounter,
    knownKeys: KnownKeys,
    keyIndex: KeyIndex,
    newChangelog: () => ChangelogWriter) {

  private var changelog: ChangelogWriter = _

  /** True once the version has a changelog: the local DB may differ from the loaded version. */
  def changed: Boolean = changelog != null

  /**
   * The timestamp of the key's row in the timestamped family, expired or not, or
   * [[KnownKeys.Absent]]: from this version's earlier reads if known, else from RocksDB.
   */
  def storedTimestamp(k: Array[Byte]): java.lang.Long = {
    val known = knownKeys.lookup(k)
    if (known != null) known
    else remember(k, if (!keyIndex.certainlyAbsent(k) && db.mayExist(k)) db.get(k) else null)
  }

  /** Records what a read of the timestamped family found for the key; returns its timestamp. */
  def remember(k: Array[Byte], stored: Array[Byte]): java.lang.Long =
    if (stored == null) { knownKeys.missing(k); KnownKeys.Absent }
    else {
      val ts = TimestampedValue.timestamp(stored)
      knownKeys.found(k, ts)
      java.lang.Long.valueOf(ts)
    }

  // Each change opens the changelog before it touches the DB, so that a change the DB refused (a full
  // disk) still leaves the version `changed`: its abort then stops trusting the local copy.

  def write(k: Array[Byte], v: Array[Byte], ts: Long): Unit = {
    val changes = log()
    val old = storedTimestamp(k)
    if (!KnownKeys.isAbsent(old)) counter.removed(old)
    else if (access.isLegacy(k)) access.dropLegacy(k)
    counter.added(ts)
    db.put(k, v)
    // A key the DB held is in the filter already.
    if (KnownKeys.isAbsent(old)) keyIndex.addedNew(k)
    changes.put(k, v)
    knownKeys.written(k, ts)
  }

  def delete(k: Array[Byte], ts: Long): Unit = {
    val changes = log()
    counter.removed(ts)
    db.delete(k)
    changes.delete(k)
    knownKeys.removed(k)
  }

  /** Removes a legacy row (replaying the logged delete removes it from both families). */
  def deleteLegacy(k: Array[Byte]): Unit = {
    val changes = log()
    access.dropLegacy(k)
    changes.delete(k)
    knownKeys.removed(k)
  }

  /** Removes the key's row, in whichever family it is. */
  def remove(k: Array[Byte]): Unit = {
    val old = storedTimestamp(k)
    if (!KnownKeys.isAbsent(old)) delete(k, old)
    else if (access.isLegacy(k)) deleteLegacy(k)
  }

  /** Seals the changelog (created now if nothing changed); returns its bytes. */
  def commit(rowsAfter: Long, record: TtlRecord): Long = log().commit(rowsAfter, record)

  /** Drops the changelog: nothing of this version reaches the checkpoint. */
  def cancel(): Unit = if (changelog != null) changelog.cancel()

  private def log(): ChangelogWriter = {
    if (changelog == null) changelog = newChangelog()
    changelog
  }
}
