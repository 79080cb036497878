package io.ttlstore.store.rocksdb

import java.io.File
import java.util.{ArrayList => JArrayList}

import io.ttlstore.checkpoint.CheckpointRangedReads
import io.ttlstore.compat.CollectionConverters._

import org.rocksdb._

import io.ttlstore.config.TtlStoreSettings
import io.ttlstore.errors.{DiskFull, TtlStoreErrors, TtlStoreException}
import io.ttlstore.store.nativelib.{NativeFilter, NativeReadsLib, TtlCompactionFilter}

/**
 * One RocksDB instance of one store, and the only owner of its native handles.
 *
 * Column families:
 *  - `timestamped`: current-format rows, values laid out by [[TimestampedValue]]; with TTL and the
 *    native filter, RocksDB drops expired rows while compacting it ([[TtlCompactionFilter]]);
 *  - `default`: the rows of an adopted checkpoint (Spark's provider state), in their plain format,
 *    until they are upgraded into `timestamped` ([[LegacyRowAccess]]); never filtered.
 *
 * RocksDB's WAL is off: every committed version is durable through its changelog file in the
 * checkpoint, and a store whose process dies is rebuilt from the checkpoint, never from local files.
 * Point reads go through [[NativeReadsLib]] where the native library loads (RocksJava 9 throws a C++
 * exception for every missing key). Puts are applied one by one (RocksDB makes each a one-entry write batch): a client-side batch
 * would need an indexed overlay for reads and would break iteration while mutating, which Spark's
 * operators do. Replays of changelogs go through large write batches.
 */
final class RocksDbHandle private (
    val dir: File,
    val storeName: String,
    db: RocksDB,
    dbOptions: DBOptions,
    cfOptions: Seq[ColumnFamilyOptions],
    handles: Seq[ColumnFamilyHandle],
    /** The native filter of the timestamped family; closed after the DB that uses it. */
    val filter: Option[TtlCompactionFilter],
    /** The Bloom filters the families' table options hold; closed after the DB, like the options. */
    bloomFilters: Seq[BloomFilter],
    /** True when the shared write buffer manager charges this instance's memtables to the cache. */
    memtablesInCache: Boolean,
    /** The native point read, or null: RocksJava's `get` then ([[NativeReadsLib]]). */
    reads: NativeReadsLib,
    /** The SST files still coming down when it opened ([[LazyFiles]]); closed after the DB. */
    val lazyFiles: Option[LazyFiles]) extends AutoCloseable {

  // handles(0) is the legacy family: rows of an adopted checkpoint in their plain format.
  private val legacyFamily = handles(0)
  private val timestampedFamily = handles(1)
  // The native handles the point read passes to RocksDB's C API, read once rather than per row.
  private val (dbHandle, legacyHandle, timestampedHandle) =
    (db.getNativeHandle, legacyFamily.getNativeHandle, timestampedFamily.getNativeHandle)
  private val writeOptions = new WriteOptions().setDisableWAL(true)

  /** Which mutable options this DB's reads want, decided at each commit. */
  private val tuning = new ReadTuning

  /** RocksDB's sequence number at the previous commit (or the open): a commit's writes count from it. */
  private var sequenceAtCommit = db.getLatestSequenceNumber
  private val readOptions = new ReadOptions()
  @volatile private var closed = false

  /** RocksDB does not compact while SST files are still coming down: no compaction rewrites files it reads remotely. */
  private var compactionsDeferred = lazyFiles.isDefined

  /**
   * True while SST files are still coming down ([[LazyFiles]]); the first call that finds them all local lets
   * RocksDB compact again. Throws what made a file fail to come down, naming the file.
   */
  def hydrating: Boolean = synchronized {
    if (compactionsDeferred && lazyFiles.forall(_.allLocal())) wrap("let its compactions run") {
      val resume = MutableColumnFamilyOptions.builder().setDisableAutoCompactions(false).build()
      handles.foreach(db.setOptions(_, resume))
      compactionsDeferred = false
    }
    compactionsDeferred
  }

  private def wrap[T](operation: String)(body: => T): T =
    try body
    catch { case e: RocksDBException => throw named(operation, e) }

  private def named(operation: String, e: RocksDBException): Throwable =
    lazyFiles.flatMap(_.named(e)).getOrElse(RocksDbHandle.failure(storeName, dir, operation, e))

  def get(key: Array[Byte]): Array[Byte] = wrap("get a key") {
    if (reads != null) reads.get(dbHandle, timestampedHandle, key)
    else db.get(timestampedFamily, readOptions, key)
  }

  /** True if point reads go through [[NativeReadsLib]]. */
  def readsNatively: Boolean = reads != null

  /** Reads ahead hold it shared while they read; [[close]] takes it whole, after the reads under way. */
  private val readsAhead = new java.util.concurrent.locks.ReentrantReadWriteLock()

  /**
   * Reads ahead of a task, in another thread than the task's: brings the blocks that hold `key` into RocksDB's
   * block cache unless they are cached already or the key is surely absent (RocksDB's Bloom filters and memtables),
   * and drops what it read. Says which ([[RocksDbHandle.Warmed]]); a DB closing or closed is not read. Throws what
   * the read met, as [[get]] does.
   */
  def warm(key: Array[Byte]): RocksDbHandle.Warmed = {
    val shared = readsAhead.readLock()
    if (!shared.tryLock()) RocksDbHandle.Warmed.NotRead
    else
      try {
        if (closed) RocksDbHandle.Warmed.NotRead
        else {
          val cached = new Holder[Array[Byte]]()
          if (!db.keyMayExist(timestampedFamily, key, cached)) RocksDbHandle.Warmed.Absent
          else if (cached.getValue != null) RocksDbHandle.Warmed.Cached
          else {
            get(key)
            RocksDbHandle.Warmed.Read
          }
        }
      } finally shared.unlock()
  }

  /** True if the key may exist; false is certain (Bloom filter and memtable only, no disk read). */
  def mayExist(key: Array[Byte]): Boolean = db.keyMayExist(timestampedFamily, key, null)

  def put(key: Array[Byte], value: Array[Byte]): Unit = wrap("put a key") {
    db.put(timestampedFamily, writeOptions, key, value)
  }

  def delete(key: Array[Byte]): Unit = wrap("delete a key") {
    db.delete(timestampedFamily, writeOptions, key)
  }

  /** A legacy row (plain value, no timestamp), or null. */
  def getLegacy(key: Array[Byte]): Array[Byte] = wrap("get a legacy key") {
    if (!db.keyMayExist(legacyFamily, key, null)) null
    else if (reads != null) reads.get(dbHandle, legacyHandle, key)
    else db.get(legacyFamily, readOptions, key)
  }

  def deleteLegacy(key: Array[Byte]): Unit = wrap("delete a legacy key") {
    db.delete(legacyFamily, writeOptions, key)
  }

  /** Applies a batch built with [[newBatch]]; the caller closes the batch. */
  def write(batch: WriteBatch): Unit = wrap("write a batch") { db.write(writeOptions, batch) }

  def newBatch(): BatchWriter = new BatchWriter(timestampedFamily)

  /** A batch of legacy rows (adoption). */
  def newLegacyBatch(): BatchWriter = new BatchWriter(legacyFamily)

  /** An iterator over the current rows; it sees the rows as they were when it was created. */
  def newIterator(): CheckedIterator =
    new CheckedIterator(db.newIterator(timestampedFamily, readOptions), named("read its rows", _))

  /** An iterator over the legacy family's rows (rows in a format without timestamps). */
  def newLegacyIterator(): CheckedIterator =
    new CheckedIterator(db.newIterator(legacyFamily, readOptions), named("read its legacy rows", _))

  /**
   * A consistent copy of the current files in `target` (hard links; flushes the memtable); one that
   * fails (a full disk) leaves no part of `target` behind. Waits for SST files still coming down ([[LazyFiles]]).
   */
  def checkpointTo(target: File): Unit = wrap("create a local checkpoint") {
    lazyFiles.foreach(_.awaitLocal())
    val checkpoint = Checkpoint.create(db)
    try checkpoint.createCheckpoint(target.getAbsolutePath)
    catch { case e: RocksDBException => org.apache.commons.io.FileUtils.deleteQuietly(target); throw e }
    finally checkpoint.close()
  }

  /** Starts flushing the timestamped family's memtables in RocksDB's background threads; returns at once. */
  def flushInBackground(): Unit = wrap("start a flush") {
    val options = new FlushOptions().setWaitForFlush(false)
    try db.flush(options, timestampedFamily)
    finally options.close()
  }

  def longProperty(name: String): Long = wrap(s"read $name") {
    db.getLongProperty(timestampedFamily, name)
  }

  /**
   * This instance's memory, read once: its share of its executor's (of the shared block cache, [[SharedNativeResources
   * .cacheShareBytes]]), its own memtables and table readers (outside the cache).
   */
  def memoryFigures: MemoryFigures = wrap("read its memory usage") {
    MemoryFigures(SharedNativeResources.budgetShareBytes, SharedNativeResources.cacheShareBytes,
      db.getAggregatedLongProperty("rocksdb.cur-size-all-mem-tables"), SharedNativeResources.residentShareBytes,
      db.getAggregatedLongProperty("rocksdb.estimate-table-readers-mem"), memtablesInCache)
  }

  /** The reads the checkpoint served this DB so far: none where every file was local at its open. */
  def checkpointReads: CheckpointRangedReads.Served =
    lazyFiles.fold(CheckpointRangedReads.Served.Zero)(_.checkpointReads)

  def liveSstBytes: Long = longProperty("rocksdb.live-sst-files-size")

  /** Files in the timestamped family's L0. */
  def l0Files: Int = wrap("read its L0 files") {
    // A string property: RocksDB's integer properties do not include it.
    db.getProperty(timestampedFamily, "rocksdb.num-files-at-level0").trim.toInt
  }

  /**
   * After a commit of a store of `rows` rows: sets the mutable options [[ReadTuning]] asks for, from
   * the rows written since the previous commit (RocksDB's sequence number grows by one with each put
   * and delete; the first commit after a load counts the replay's too).
   */
  def committed(rows: Long): Unit = wrap("set its options") {
    hydrating
    val sequence = db.getLatestSequenceNumber
    val change = tuning.afterCommit(rows, written = sequence - sequenceAtCommit, l0Files)
    sequenceAtCommit = sequence
    if (change.memtableFilter) db.setOptions(timestampedFamily, FamilyOptions.memtableFilter)
    change.readMostly.foreach(readOnly => db.setOptions(timestampedFamily, FamilyOptions.l0Trigger(readOnly)))
  }

  /**
   * Compacts all of the timestamped family's data (memtable included) in this thread, so that the
   * native filter sees every row, cold files too. Other threads may read and write meanwhile; the
   * caller keeps the DB from being closed until it returns.
   */
  def compactNow(): Unit = wrap("compact") { db.compactRange(timestampedFamily) }

  def isClosed: Boolean = closed

  override def close(): Unit = synchronized {
    if (!closed) {
      readsAhead.writeLock().lock()
      closed = true
      writeOptions.close()
      readOptions.close()
      handles.foreach(_.close())
      db.close()
      dbOptions.close()
      cfOptions.foreach(_.close())
      bloomFilters.foreach(_.close())
      filter.foreach(_.close())
      lazyFiles.foreach(_.close())
      SharedNativeResources.instanceClosed()
    }
  }

  /** Accumulates puts and deletes for one [[write]]. */
  final class BatchWriter(family: ColumnFamilyHandle) extends AutoCloseable {
    val batch = new WriteBatch()
    def put(key: Array[Byte], value: Array[Byte]): Unit = batch.put(family, key, value)
    def delete(key: Array[Byte]): Unit = batch.delete(family, key)

    /** Deletes the key from the legacy family too (replaying changes of an upgrading store). */
    def deleteLegacy(key: Array[Byte]): Unit = batch.delete(legacyFamily, key)
    def count: Int = batch.count()
    def flushTo(): Unit = { write(batch); batch.clear() }

    /** Writes the batch once it holds [[RocksDbHandle.BatchRecords]] records: replays stay in bounded memory. */
    def flushIfFull(): Unit = if (batch.count() >= RocksDbHandle.BatchRecords) flushTo()
    override def close(): Unit = batch.close()
  }
}

object RocksDbHandle {
  val BatchRecords = 10000

  /** What a read ahead ([[RocksDbHandle.warm]]) did. */
  sealed trait Warmed
  object Warmed {
    case object Absent extends Warmed
    case object Cached extends Warmed
    case object Read extends Warmed
    case object NotRead extends Warmed
  }

  /** RocksDB's failure to `operation` in `dir`: a full disk named as one ([[DiskFull]]), else as RocksDB's. */
  private def failure(storeName: String, dir: File, operation: String, e: RocksDBException): TtlStoreException =
    if (DiskFull.in(e)) LocalDiskFull.error(storeName, dir, operation, e)
    else TtlStoreErrors.rocksDbFailure(storeName, s"$operation in ${dir.getAbsolutePath}", e)

  /** True if `e` is RocksDB reporting damaged files (not, say, a full disk). */
  def isCorruption(e: TtlStoreException): Boolean = e.getCause match {
    case r: RocksDBException => Option(r.getStatus).exists(_.getCode == Status.Code.Corruption)
    case _ => false
  }
  val LegacyFamily: String = "default"
  val TimestampedFamily: String = "timestamped"

  /**
   * How far a compaction reads ahead in its inputs where some may be read from the checkpoint (lazy and remote mode),
   * each read of a remote file being a request to the checkpoint's file system: RocksDB 9.8.4's default, where
   * 8.3.2's (Spark 3.5) is 0, a request per 4 KiB block.
   */
  val RemoteCompactionReadaheadBytes: Long = 2L * 1024 * 1024

  /**
   * Opens (creating if needed) the instance in `dir` with both column families; `filter` (owned by
   * the handle from here on) goes to the timestamped family, with periodic compaction. With `lazyFiles`
   * (owned too), the instance reads through its Env and compacts only once they are all local.
   */
  def open(dir: File, storeName: String, settings: TtlStoreSettings, filter: Option[TtlCompactionFilter] = None,
      lazyFiles: Option[LazyFiles] = None): RocksDbHandle = {
    SharedNativeResources.ensureLoaded()
    val memory = SharedNativeResources.sharedMemory(settings.memory)
    val bloomFilters = Seq.fill(2)(FamilyOptions.bloomFilter(settings)).flatten
    val legacyOptions = FamilyOptions(settings, memory.cache, bloomFilters.headOption)
    val timestampedOptions = FamilyOptions(settings, memory.cache, bloomFilters.lift(1))
    filter.foreach { f =>
      timestampedOptions.setCompactionFilter(f)
      timestampedOptions.setPeriodicCompactionSeconds(settings.periodicCompactionSeconds)
    }
    val cfOptions = Seq(legacyOptions, timestampedOptions)
    if (lazyFiles.isDefined) cfOptions.foreach(_.setDisableAutoCompactions(true))
    val dbOptions = new DBOptions()
      .setCreateIfMissing(true)
      .setCreateMissingColumnFamilies(true)
      .setMaxOpenFiles(-1)
      .setAvoidFlushDuringShutdown(true)
      .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
      .setKeepLogFileNum(2)
    memory.writeBufferManager.foreach(dbOptions.setWriteBufferManager)
    lazyFiles.foreach(f => dbOptions.setEnv(f.env).setCompactionReadaheadSize(RemoteCompactionReadaheadBytes))
    if (settings.hooks.rocksDbStatistics) ReadStatistics.attachTo(dbOptions)
    val descriptors = Seq(LegacyFamily, TimestampedFamily).zip(cfOptions)
      .map { case (n, o) => new ColumnFamilyDescriptor(n.getBytes("UTF-8"), o) }
    val handles = new JArrayList[ColumnFamilyHandle]()
    val db =
      try RocksDB.open(dbOptions, dir.getAbsolutePath, descriptors.asJava, handles)
      catch {
        case e: RocksDBException =>
          dbOptions.close(); cfOptions.foreach(_.close()); bloomFilters.foreach(_.close()); filter.foreach(_.close())
          val named = lazyFiles.flatMap(_.named(e))
          lazyFiles.foreach(_.close())
          throw named.getOrElse(failure(storeName, dir, "open its RocksDB instance", e))
      }
    SharedNativeResources.instanceOpened()
    new RocksDbHandle(dir, storeName, db, dbOptions, cfOptions, handles.asScala.toSeq, filter, bloomFilters,
      memtablesInCache = memory.writeBufferManager.isDefined, reads = NativeFilter.loader().reads.orNull, lazyFiles)
  }
}
