package io.ttlstore.store.version

import io.ttlstore.store.codec.TimestampedValue
import io.ttlstore.store.rocksdb.RocksDbHandle

/**
 * How one store version reaches its rows, chosen once at open as Kafka's `RocksDBTimestampedStore`
 * chooses its accessor (KIP-258). A store without legacy rows reads the `timestamped` family alone
 * ([[RowAccess.Current]]). A store still holding an adopted checkpoint's rows is in upgrade mode
 * ([[RowAccess.Upgrading]]): a key missing from `timestamped` is looked up in the legacy family,
 * scans merge both families in key order, and each commit upgrades a bounded number of legacy rows.
 */
sealed trait RowAccess {

  /** Rows still in the legacy family. */
  def legacyRows: Long

  /** The key's legacy row as a timestamped value (stamped with the legacy stamp), or null. */
  def legacy(k: Array[Byte]): Array[Byte]

  /** True if the key has a legacy row (no copy made: writes and removes only need to know). */
  def isLegacy(k: Array[Byte]): Boolean

  /** Takes the key out of the legacy family (upgraded or removed); the caller logs the change. */
  def dropLegacy(k: Array[Byte]): Unit

  /** A cursor over the rows in key order, values in the timestamped format. */
  def cursor(): RowCursor

  /**
   * The bounded upgrade at commit: hands up to `budget` legacy rows, from `from` on (None: the
   * first), to `each(key, plain value)`; returns where the next commit resumes (None: the start).
   */
  def upgradeSome(from: Option[Array[Byte]], budget: Int)(each: (Array[Byte], Array[Byte]) => Unit): Option[Array[Byte]]
}

object RowAccess {

  /** The accessor for a store whose DB holds `legacyRows` legacy rows judged by `legacyStamp`. */
  def open(db: RocksDbHandle, legacyRows: Long, legacyStamp: Long): RowAccess =
    if (legacyRows > 0) new Upgrading(db, legacyRows, legacyStamp) else new Current(db)

  /** The timestamped family alone. */
  final class Current(db: RocksDbHandle) extends RowAccess {
    override def legacyRows: Long = 0L
    override def legacy(k: Array[Byte]): Array[Byte] = null
    override def isLegacy(k: Array[Byte]): Boolean = false
    override def dropLegacy(k: Array[Byte]): Unit = ()
    override def cursor(): RowCursor = new RowCursor.Current(db.newIterator())
    override def upgradeSome(from: Option[Array[Byte]], budget: Int)(
        each: (Array[Byte], Array[Byte]) => Unit): Option[Array[Byte]] = from
  }

  /** Both families, until the last legacy row leaves; from then on it behaves as [[Current]]. */
  final class Upgrading(db: RocksDbHandle, private var remaining: Long, legacyStamp: Long) extends RowAccess {
    override def legacyRows: Long = remaining

    override def legacy(k: Array[Byte]): Array[Byte] =
      if (remaining == 0) null
      else {
        val plain = db.getLegacy(k)
        if (plain == null) null else TimestampedValue.encode(legacyStamp, plain, 0, plain.length)
      }

    override def isLegacy(k: Array[Byte]): Boolean = remaining > 0 && db.getLegacy(k) != null

    override def dropLegacy(k: Array[Byte]): Unit = {
      db.deleteLegacy(k)
      remaining -= 1
    }

    override def cursor(): RowCursor =
      if (remaining > 0) new RowCursor.Merged(db.newIterator(), db.newLegacyIterator(), legacyStamp)
      else new RowCursor.Current(db.newIterator())

    override def upgradeSome(from: Option[Array[Byte]], budget: Int)(
        each: (Array[Byte], Array[Byte]) => Unit): Option[Array[Byte]] =
      if (remaining == 0 || budget <= 0) from
      else {
        val it = db.newLegacyIterator()
        try {
          // Resume after the rows upgraded before, not over their tombstones from the first key on.
          from match {
            case Some(key) => it.seek(key)
            case None => it.seekToFirst()
          }
          var n = 0
          while (it.isValid && n < budget) {
            each(it.key(), it.value())
            n += 1
            it.next()
          }
          if (it.isValid) Some(it.key()) else None
        } finally it.close()
      }
  }
}
