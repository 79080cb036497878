package io.ttlstore.config

import io.ttlstore.config.ValueForm.{Duration, Fraction, OneOf, Text, Whole}
import io.ttlstore.ttl.{Durations, LegacyRowTimestamp, Named, StateVisibility, TimeCharacteristic, TtlPolicy, UpdateType}

/**
 * The table of ttlstore's settings. Spark passes a provider every explicitly set session conf that
 * starts with `spark.sql.streaming.stateStore.`; ours live one level below, so a typo in one of
 * them is caught here instead of being ignored.
 */
object TtlStoreConfig {
  val Prefix: String = ConfigKey.Prefix

  private val MiB = Some("MiB")

  val LocalDir: ConfigKey[String] = ConfigKey(
    "localDir", "",
    "Local directory for the working copies of the RocksDB instances. Unset: Spark's local " +
      "directories (spark.local.dir), or the JVM's temporary directory outside Spark. A process " +
      "deletes its copies when it ends; the copies of a process killed on this host are deleted by " +
      "the next process that opens a store here.",
    Text("a directory path"),
    s => Some(s))

  val BoundedMemoryUsage: ConfigKey[Boolean] = ConfigKey.flag(
    "boundedMemoryUsage", true,
    "Whether all ttlstore RocksDB instances of one executor share one memory budget of " +
      "maxMemoryUsageMB: one block cache, with every store's memtables charged to it, so that " +
      "many stores (200 shuffle partitions times several operators) cannot add up beyond it. " +
      "false: a shared block cache of blockCacheSizeMB, and memtables outside it (up to two of " +
      "writeBufferSizeMB per store and column family).")

  val MaxMemoryUsageMb: ConfigKey[Option[Long]] = {
    val form = Whole(1, 1L << 20, MiB)
    ConfigKey("maxMemoryUsageMB", None,
      "With boundedMemoryUsage: the RocksDB memory of all ttlstore stores of one executor, in MiB " +
        "(the block cache and the memtables charged to it; index and filter blocks too with " +
        "indexAndFiltersInCache, else they come on top). When the memtables of all stores reach " +
        "writeBufferCacheRatio of it, the store being written flushes its memtable. " +
        s"Unset: ${BudgetRule.LocalMiB} in local mode; on executors, half of what " +
        "spark.executor.memoryOverhead (or Spark's default overhead) leaves after " +
        s"${BudgetRule.ReserveMiB} MiB for the JVM's own memory outside the heap (ttlstore's native " +
        "memory beside the budget grows as large as the budget once reads churn a full cache), from " +
        s"${BudgetRule.FloorMiB} to ${BudgetRule.LocalMiB}. On YARN and Kubernetes a value that needs " +
        s"more overhead than the executors have (twice it plus ${BudgetRule.ReserveMiB} MiB) is refused. " +
        "The first store opened in an executor sets it.",
      form, form.parse(_).map(Some(_)))
  }

  val WriteBufferCacheRatio: ConfigKey[Double] = ConfigKey.double(
    "writeBufferCacheRatio", 0.5,
    "With boundedMemoryUsage: the share of maxMemoryUsageMB that the memtables of all stores " +
      "may take together; the rest holds data blocks (and, with indexAndFiltersInCache, index " +
      "and filter blocks).",
    Fraction(0.05, 0.95))

  val BlockCacheSizeMb: ConfigKey[Long] = ConfigKey.long(
    "blockCacheSizeMB", 64L,
    "With boundedMemoryUsage false: size of the block cache shared by all ttlstore RocksDB " +
      "instances of one executor, in MiB (with boundedMemoryUsage, the cache is maxMemoryUsageMB). " +
      "The first store opened in an executor sets it. With indexAndFiltersInCache, index and " +
      "filter blocks (partitioned into 4 KiB blocks) are cached with high priority in half of " +
      "it; a store larger than the cache reads one 4 KiB data block per lookup that misses it.",
    Whole(0, 1L << 20, MiB))

  val WriteBufferSizeMb: ConfigKey[Int] = ConfigKey.int(
    "writeBufferSizeMB", 64,
    "Size of one RocksDB memtable per store, in MiB; a store has at most two. Memory is taken " +
      "as rows are written, and a snapshot empties them. Smaller memtables flush more often and " +
      "leave more compaction work: with 16 MiB, a store grown to 4M keys answered lookups 2x " +
      "slower for the next batches.",
    Whole(1, 1024, MiB))

  val DownloadThreads: ConfigKey[Int] = ConfigKey.int(
    "downloadThreads", 8,
    "SST files one executor downloads at once when stores load snapshots they do not hold " +
      "locally (after a lost executor, a restart on new machines), shared by every store of the " +
      "executor that loads at the same time. Object stores and HDFS serve parallel streams far " +
      "faster than one.",
    Whole(1, 256))

  val BloomFilterBitsPerKey: ConfigKey[Int] = ConfigKey.int(
    "bloomFilterBitsPerKey", 10,
    "Bits per key of the SST files' Bloom filters; they make lookups of absent keys (new " +
      "keys, duplicates checks) cheap. 0 turns the filters off.",
    Whole(0, 64))

  val IndexAndFiltersInCache: ConfigKey[Boolean] = ConfigKey.flag(
    "indexAndFiltersInCache", false,
    "Whether the SST files' index and Bloom filter blocks live in the block cache (partitioned " +
      "into small blocks, so that the memory budget also bounds them) instead of beside it, " +
      "loaded once per file as Spark's RocksDB provider keeps them. false is faster at millions " +
      "of keys per store (every file a compaction writes is ready for lookups at once) and adds " +
      "about 1.5 bytes per stored key outside maxMemoryUsageMB (10 Bloom filter bits and the " +
      "index), reported in memoryUsedBytes; true keeps them inside the budget.")

  val SstCompression: ConfigKey[String] = {
    val form = OneOf(Seq("lz4", "zstd", "snappy", "none"))
    ConfigKey("sstCompression", "lz4",
      "Compression of the RocksDB data files (SST): lz4, zstd, snappy or none.",
      form, form.parse)
  }

  val KnownKeysCapacity: ConfigKey[Int] = ConfigKey.int(
    "knownKeysCapacity", 200000,
    "Keys per store whose existence one batch remembers from its reads, so that writing a key " +
      "just read needs no second RocksDB lookup to keep numRowsTotal exact (about 60 bytes each " +
      "besides the key, held by the running task and given back at commit). 0 turns it off.",
    Whole(0, 10000000))

  val Ttl: ConfigKey[Long] = ConfigKey(
    "ttl", 0L,
    "Time to live of a state row: it expires once this much time has passed since it was " +
      "written (or, with updateType OnReadAndWrite, last read). 0 or unset: TTL off.",
    Duration("turns TTL off"),
    Durations.parseMillis,
    scoped = true)

  /** A scoped setting whose value is one of an enum's names (matched case-insensitively). */
  private def enumKey[T <: Named](name: String, values: Seq[T], doc: String): ConfigKey[T] =
    ConfigKey(name, values.head, doc, OneOf(values.map(_.name)), TtlPolicy.named(values), scoped = true)

  val UpdateTypeKey: ConfigKey[UpdateType] = enumKey("updateType", UpdateType.all,
    "OnCreateAndWrite: a write renews a row's timestamp. OnReadAndWrite: point reads " +
      "(get, keyExists, prefix scans) in the query's write stores renew it too.")

  val StateVisibilityKey: ConfigKey[StateVisibility] = enumKey("stateVisibility", StateVisibility.all,
    "NeverReturnExpired: an expired row is invisible to every read and removed when accessed. " +
      "ReturnExpiredIfNotCleanedUp: it is returned until the sweep removes it.")

  val TimeCharacteristicKey: ConfigKey[TimeCharacteristic] = enumKey("timeCharacteristic",
    TimeCharacteristic.all,
    "ProcessingTime: rows are stamped with the batch's timestamp from Spark's offset log (one per " +
      "batch, kept when a batch runs again). EventTime: " +
      "rows are stamped with eventTimeColumn, and now is the batch's watermark when the query has " +
      "one, else the largest event time the store has seen (stream time), recorded with each " +
      "version. Fixed for a checkpoint once it has rows.")

  val EventTimeColumnKey: ConfigKey[Option[String]] = ConfigKey(
    "eventTimeColumn", None,
    "With EventTime: the timestamp or long (epoch milliseconds) field of the state's key or " +
      "value row that stamps a row; a path such as window.end. The key is searched first.",
    Text("a field path such as eventTime or window.end"),
    s => Some(s).filter(p => p.nonEmpty && p.split('.').forall(_.nonEmpty)).map(Some(_)),
    scoped = true)

  val AllowTtlOnStreamStreamJoin: ConfigKey[Boolean] = ConfigKey.flag(
    "allowTtlOnStreamStreamJoin", false,
    "Stream-stream joins keep a count store and an index store per side that must agree; TTL " +
      "expires rows of each independently, which can make a join fail or lose matches. ttlstore " +
      "refuses TTL on a join unless this is true (you accept those risks).",
    scoped = true)

  val SweepRowsPerCommit: ConfigKey[Int] = ConfigKey.int(
    "sweepRowsPerCommit", 100000,
    "Rows the incremental sweep examines per store and commit, resuming where it stopped, when " +
      "some row may be expired; expired ones are removed. 0 turns the sweep off (expired rows " +
      "are then removed on access and before snapshots). Stores that use the native filter do " +
      "not sweep.",
    Whole(0, 100000000))

  val NativeFilterEnabled: ConfigKey[NativeMode] = ConfigKey.nativeMode(
    "nativeFilter.enabled", NativeMode.Auto,
    "Whether stores with TTL give RocksDB ttlstore's native compaction filter, which drops " +
      "expired rows while RocksDB compacts (then the JVM sweep does not run). auto: when the " +
      "library loads for this platform, else one warning and the JVM sweep. true: a store fails " +
      "to start without it. false: the JVM sweep only.")

  val LazyLoadEnabled: ConfigKey[NativeMode] = ConfigKey.nativeMode(
    "lazyLoad.enabled", NativeMode.Off,
    "Whether a store that loads a snapshot whose SST files are not local (a restart, an executor " +
      "lost) opens as soon as the snapshot's small files and changelogs are in, reading the SST " +
      "files from the checkpoint by ranged reads while they download in the background (RocksDB " +
      "compacts once they are all local). auto: when ttlstore's lazy file system loads, else one " +
      "warning and every file is fetched first. true: a store fails to load without it. false: " +
      "every file is fetched first.")

  val LazyReadTimeout: ConfigKey[Long] = ConfigKey(
    "lazyLoad.readTimeout", 300000L,
    "With lazyLoad.enabled: how long a read of an SST file from the checkpoint may wait for the " +
      "file system before it fails the task by name (CHECKPOINT_READ_FAILED) rather than hang it; " +
      "the batch then runs again. Keep it above the checkpoint file system's own timeouts and " +
      "retries (s3a: fs.s3a.connection.timeout, fs.s3a.retry.limit). 0: no bound.",
    Duration("means no bound"),
    Durations.parseMillis)

  val RemoteCacheMb: ConfigKey[Long] = ConfigKey.long(
    "remote.localCacheMB", 0L,
    "State larger than the local disk: when set, SST files stay in the checkpoint and the local " +
      "disk keeps at most about this many MiB of them per executor (all its stores together). A " +
      "store opens as with lazyLoad.enabled, waiting for no download; the files RocksDB writes stay " +
      "local until a snapshot has uploaded them, then the least recently read are read from the " +
      "checkpoint by ranged reads instead, and the room left is filled in the background with the " +
      "remote files read last. Needs ttlstore's lazy file system (a store fails to load " +
      "without it, LAZY_LOAD_UNAVAILABLE). 0: off, every file local.",
    Whole(0, 1L << 40))

  val ReadAheadRows: ConfigKey[Int] = ConfigKey.int(
    "readAhead.rows", 1000,
    "Input rows a task reads ahead of each stateful operator whose state ttlstore serves and " +
      "reads ahead (docs/read-ahead.md names them), so that the state of their keys is brought from " +
      "the checkpoint or the disk in other threads, many reads at once, before the operator asks " +
      "for it. A speed hint: it never changes what a read returns, and a store whose reads find " +
      "their blocks cached anyway stops reading ahead by itself. 0: off.",
    Whole(0, 1000000))

  val ReadAheadMaxMb: ConfigKey[Int] = ConfigKey.int(
    "readAhead.maxMB", 16,
    "At most this many MiB of input rows a task holds while it reads ahead (with readAhead.rows, " +
      "whichever bound comes first).",
    Whole(1, 4096))

  val ReadAheadThreads: ConfigKey[Int] = ConfigKey.int(
    "readAhead.threads", 64,
    "Reads ahead an executor keeps in flight at once, over all its tasks: threads that wait on the " +
      "checkpoint's file system or the disk, not on the processors (idle ones end after a minute).",
    Whole(1, 1024))

  val PeriodicCompaction: ConfigKey[Option[Long]] = ConfigKey(
    "nativeFilter.periodicCompaction", None,
    "With the native filter: RocksDB rewrites a data file of a store with TTL once it is this " +
      "old, so that expired rows in files no compaction touches still leave the disk. Unset: " +
      "twice the TTL, at least 1 hour and at most 30 days. 0: off.",
    Duration("turns periodic compaction off"),
    s => Durations.parseMillis(s).map(Some(_)))

  val CompactExpiredShare: ConfigKey[Double] = ConfigKey.double(
    "nativeFilter.compactExpiredShare", 0.5,
    "With the native filter: when the rows that expired since a store's last full compaction " +
      "reach this share of its stored rows (and at least 1000 rows), the commit asks RocksDB to " +
      "compact the store's files in the background. 0: never.",
    Fraction(0, 1))

  val LegacyRowTimestampKey: ConfigKey[LegacyRowTimestamp] = ConfigKey(
    "legacyRowTimestamp", LegacyRowTimestamp.Migration,
    "The timestamp TTL judges the rows of an adopted checkpoint by (rows written by Spark's own " +
      "provider, which have none) until they are rewritten. migration: the time of the first " +
      "load after the migration, so nothing expires at once (in event time: unknown). unknown: " +
      "never expires until rewritten. expired: already expired.",
    OneOf(LegacyRowTimestamp.all.map(_.name)),
    TtlPolicy.named(LegacyRowTimestamp.all))

  val UpgradeRowsPerCommit: ConfigKey[Int] = ConfigKey.int(
    "upgradeRowsPerCommit", 10000,
    "Legacy rows (of an adopted checkpoint) that each commit upgrades to the timestamped format, " +
      "besides those reads and writes upgrade, so that upgrade mode ends even for keys never " +
      "touched. 0: only on access.",
    Whole(0, 100000000))

  val all: Seq[ConfigKey[_]] = Seq(LocalDir, BoundedMemoryUsage, MaxMemoryUsageMb,
    WriteBufferCacheRatio, BlockCacheSizeMb, WriteBufferSizeMb, DownloadThreads,
    BloomFilterBitsPerKey, IndexAndFiltersInCache, SstCompression, KnownKeysCapacity, Ttl, UpdateTypeKey,
    StateVisibilityKey, TimeCharacteristicKey, EventTimeColumnKey, AllowTtlOnStreamStreamJoin,
    SweepRowsPerCommit, NativeFilterEnabled, LazyLoadEnabled, LazyReadTimeout, RemoteCacheMb,
    ReadAheadRows, ReadAheadMaxMb, ReadAheadThreads, PeriodicCompaction, CompactExpiredShare,
    LegacyRowTimestampKey, UpgradeRowsPerCommit)
}
