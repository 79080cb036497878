package io.ttlstore

import java.util.Locale

/**
 * One setting: its name under [[TtlStoreConfig.Prefix]], default, documentation and parser.
 * A `scoped` setting may also be set per operator and per store of an operator (see [[ConfigScope]]).
 */
final case class ConfigKey[T](
    name: String,
    default: T,
    doc: String,
    allowed: String,
    parse: String => Option[T],
    scoped: Boolean = false) {

  def key: String = TtlStoreConfig.Prefix + name

  def defaultText: String = (default: Any) match {
    case s: String if s.isEmpty => "(unset)"
    case None => "(unset)"
    case Some(v) => String.valueOf(v)
    case n: Named => n.name
    case other => String.valueOf(other)
  }

  /** The value set in `confs`, or the default; a value that does not parse fails naming the key. */
  def readFrom(confs: Map[String, String]): T = confs.get(key) match {
    case None => default
    case Some(raw) => parseAt(key, raw)
  }

  /** The value for a store: the most specific of store, operator and global settings wins. */
  def resolve(confs: Map[String, String], scope: StoreScope): Resolved[T] =
    ConfigScope.candidates(this, scope).collectFirst {
      case k if confs.contains(k) => Resolved(parseAt(k, confs(k)), Some(k))
    }.getOrElse(Resolved(default, None))

  def parseAt(fullKey: String, raw: String): T =
    parse(raw.trim).getOrElse(throw TtlStoreErrors.invalidConfig(fullKey, raw, allowed))
}

/** A resolved value and the key that set it (None: the default). */
final case class Resolved[T](value: T, setBy: Option[String])

/** The settings as parsed once at `init`; nothing else reads the raw configuration. */
final case class TtlStoreSettings(
    localDir: Option[String],
    blockCacheSizeMb: Long,
    writeBufferSizeMb: Int,
    bloomFilterBitsPerKey: Int,
    sstCompression: String,
    knownKeysCapacity: Int,
    ttl: TtlPolicy = TtlPolicy.Off,
    allowTtlOnStreamStreamJoin: Boolean = false,
    sweepRowsPerCommit: Int = TtlStoreConfig.SweepRowsPerCommit.default,
    nativeFilter: NativeFilterMode = TtlStoreConfig.NativeFilterEnabled.default,
    periodicCompactionMs: Option[Long] = None,
    compactExpiredShare: Double = TtlStoreConfig.CompactExpiredShare.default,
    legacyRowTimestamp: LegacyRowTimestamp = TtlStoreConfig.LegacyRowTimestampKey.default,
    upgradeRowsPerCommit: Int = TtlStoreConfig.UpgradeRowsPerCommit.default,
    testingClockMs: Option[Long] = None,
    testingNativeFilterResource: Option[String] = None) {

  /** RocksDB's periodic_compaction_seconds for the timestamped family (see the key's doc). */
  def periodicCompactionSeconds: Long = periodicCompactionMs match {
    case Some(ms) => math.max(ms / 1000, if (ms > 0) 1L else 0L)
    case None => TtlStoreConfig.derivedPeriodicCompactionSeconds(ttl.ttlMs)
  }
}

/**
 * The table of ttlstore's settings. Spark passes a provider every explicitly set session conf that
 * starts with `spark.sql.streaming.stateStore.`; ours live one level below, so a typo in one of
 * them is caught here instead of being ignored.
 */
object TtlStoreConfig {
  val Prefix = "spark.sql.streaming.stateStore.ttlstore."

  private def longIn(min: Long, max: Long)(s: String): Option[Long] =
    s.toLongOption.filter(v => v >= min && v <= max)

  private def intIn(min: Int, max: Int)(s: String): Option[Int] = longIn(min, max)(s).map(_.toInt)

  private def oneOf(values: String*)(s: String): Option[String] =
    values.find(_.equalsIgnoreCase(s))

  private def boolean(s: String): Option[Boolean] = s.toLowerCase(Locale.ROOT).toBooleanOption

  val LocalDir: ConfigKey[String] = ConfigKey(
    "localDir", "",
    "Local directory for the working copies of the RocksDB instances. Unset: Spark's local " +
      "directories (spark.local.dir), or the JVM's temporary directory outside Spark.",
    "a directory path",
    s => Some(s))

  val BlockCacheSizeMb: ConfigKey[Long] = ConfigKey(
    "blockCacheSizeMB", 64L,
    "Size of the block cache shared by all ttlstore RocksDB instances of one executor, in MiB. " +
      "The first store opened in an executor sets it.",
    "a whole number of MiB from 0 to 1048576",
    longIn(0, 1L << 20))

  val WriteBufferSizeMb: ConfigKey[Int] = ConfigKey(
    "writeBufferSizeMB", 16,
    "Size of one RocksDB memtable per store, in MiB.",
    "a whole number of MiB from 1 to 1024",
    intIn(1, 1024))

  val BloomFilterBitsPerKey: ConfigKey[Int] = ConfigKey(
    "bloomFilterBitsPerKey", 10,
    "Bits per key of the SST files' Bloom filters; they make lookups of absent keys (new " +
      "keys, duplicates checks) cheap. 0 turns the filters off.",
    "a whole number from 0 to 64",
    intIn(0, 64))

  val SstCompression: ConfigKey[String] = ConfigKey(
    "sstCompression", "lz4",
    "Compression of the RocksDB data files (SST): lz4, zstd, snappy or none.",
    "one of lz4, zstd, snappy, none",
    s => oneOf("lz4", "zstd", "snappy", "none")(s).map(_.toLowerCase(Locale.ROOT)))

  val KnownKeysCapacity: ConfigKey[Int] = ConfigKey(
    "knownKeysCapacity", 100000,
    "Keys per store whose existence one batch remembers from its reads, so that writing a key " +
      "just read needs no second RocksDB lookup to keep numRowsTotal exact (about 100 bytes " +
      "each). 0 turns it off.",
    "a whole number from 0 to 10000000",
    intIn(0, 10000000))

  val Ttl: ConfigKey[Long] = ConfigKey(
    "ttl", 0L,
    "Time to live of a state row: it expires once this much time has passed since it was " +
      "written (or, with updateType OnReadAndWrite, last read). 0 or unset: TTL off.",
    Durations.allowed,
    Durations.parseMillis,
    scoped = true)

  /** A scoped setting whose value is one of an enum's names (matched case-insensitively). */
  private def enumKey[T <: Named](name: String, values: Seq[T], doc: String): ConfigKey[T] =
    ConfigKey(name, values.head, doc, values.map(_.name).mkString("one of ", ", ", ""),
      TtlPolicy.named(values), scoped = true)

  val UpdateTypeKey: ConfigKey[UpdateType] = enumKey("updateType", UpdateType.all,
    "OnCreateAndWrite: a write renews a row's timestamp. OnReadAndWrite: point reads " +
      "(get, keyExists, prefix scans) in the query's write stores renew it too.")

  val StateVisibilityKey: ConfigKey[StateVisibility] = enumKey("stateVisibility", StateVisibility.all,
    "NeverReturnExpired: an expired row is invisible to every read and removed when accessed. " +
      "ReturnExpiredIfNotCleanedUp: it is returned until the sweep removes it.")

  val TimeCharacteristicKey: ConfigKey[TimeCharacteristic] = enumKey("timeCharacteristic",
    TimeCharacteristic.all,
    "ProcessingTime: rows are stamped with the wall clock, taken once per batch. EventTime: " +
      "rows are stamped with eventTimeColumn, and now is the largest event time the store has " +
      "seen (stream time), recorded with each version. Fixed for a checkpoint once it has rows.")

  val EventTimeColumn: ConfigKey[Option[String]] = ConfigKey(
    "eventTimeColumn", None,
    "With EventTime: the timestamp or long (epoch milliseconds) field of the state's key or " +
      "value row that stamps a row; a path such as window.end. The key is searched first.",
    "a field path such as eventTime or window.end",
    s => Some(s).filter(p => p.nonEmpty && p.split('.').forall(_.nonEmpty)).map(Some(_)),
    scoped = true)

  val AllowTtlOnStreamStreamJoin: ConfigKey[Boolean] = ConfigKey(
    "allowTtlOnStreamStreamJoin", false,
    "Stream-stream joins keep a count store and an index store per side that must agree; TTL " +
      "expires rows of each independently, which can make a join fail or lose matches. ttlstore " +
      "refuses TTL on a join unless this is true (you accept those risks).",
    "true or false",
    boolean,
    scoped = true)

  val SweepRowsPerCommit: ConfigKey[Int] = ConfigKey(
    "sweepRowsPerCommit", 100000,
    "Rows the incremental sweep examines per store and commit, resuming where it stopped, when " +
      "some row may be expired; expired ones are removed. 0 turns the sweep off (expired rows " +
      "are then removed on access and before snapshots). Stores that use the native filter do " +
      "not sweep.",
    "a whole number from 0 to 100000000",
    intIn(0, 100000000))

  val NativeFilterEnabled: ConfigKey[NativeFilterMode] = ConfigKey(
    "nativeFilter.enabled", NativeFilterMode.Auto,
    "Whether stores with TTL give RocksDB ttlstore's native compaction filter, which drops " +
      "expired rows while RocksDB compacts (then the JVM sweep does not run). auto: when the " +
      "library loads for this platform, else one warning and the JVM sweep. true: a store fails " +
      "to start without it. false: the JVM sweep only.",
    "one of auto, true, false",
    TtlPolicy.named(NativeFilterMode.all))

  val PeriodicCompaction: ConfigKey[Option[Long]] = ConfigKey(
    "nativeFilter.periodicCompaction", None,
    "With the native filter: RocksDB rewrites a data file of a store with TTL once it is this " +
      "old, so that expired rows in files no compaction touches still leave the disk. Unset: " +
      "twice the TTL, at least 1 hour and at most 30 days. 0: off.",
    Durations.allowed,
    s => Durations.parseMillis(s).map(Some(_)))

  val CompactExpiredShare: ConfigKey[Double] = ConfigKey(
    "nativeFilter.compactExpiredShare", 0.5,
    "With the native filter: when the rows that expired since a store's last full compaction " +
      "reach this share of its stored rows (and at least 1000 rows), the commit asks RocksDB to " +
      "compact the store's files in the background. 0: never.",
    "a number from 0 to 1",
    s => s.toDoubleOption.filter(v => v >= 0 && v <= 1))

  val LegacyRowTimestampKey: ConfigKey[LegacyRowTimestamp] = ConfigKey(
    "legacyRowTimestamp", LegacyRowTimestamp.Migration,
    "The timestamp TTL judges the rows of an adopted checkpoint by (rows written by Spark's own " +
      "provider, which have none) until they are rewritten. migration: the time of the first " +
      "load after the migration, so nothing expires at once (in event time: unknown). unknown: " +
      "never expires until rewritten. expired: already expired.",
    "one of migration, unknown, expired",
    TtlPolicy.named(LegacyRowTimestamp.all))

  val UpgradeRowsPerCommit: ConfigKey[Int] = ConfigKey(
    "upgradeRowsPerCommit", 10000,
    "Legacy rows (of an adopted checkpoint) that each commit upgrades to the timestamped format, " +
      "besides those reads and writes upgrade, so that upgrade mode ends even for keys never " +
      "touched. 0: only on access.",
    "a whole number from 0 to 100000000",
    intIn(0, 100000000))

  val TestingNativeFilterResource: ConfigKey[Option[String]] = ConfigKey(
    "testing.nativeFilterResource", None,
    "For tests only: the jar resource the native filter is loaded from instead of this " +
      "platform's (a missing one simulates a platform without the library).",
    "a resource path",
    s => Some(Some(s)))

  val TestingClockMs: ConfigKey[Option[Long]] = ConfigKey(
    "testing.clockMs", None,
    "For tests and demos only: the processing time, in epoch milliseconds, that every store of " +
      "the query uses instead of the wall clock.",
    "a whole number of epoch milliseconds",
    s => s.toLongOption.map(Some(_)))

  val all: Seq[ConfigKey[_]] = Seq(LocalDir, BlockCacheSizeMb, WriteBufferSizeMb,
    BloomFilterBitsPerKey, SstCompression, KnownKeysCapacity, Ttl, UpdateTypeKey,
    StateVisibilityKey, TimeCharacteristicKey, EventTimeColumn, AllowTtlOnStreamStreamJoin,
    SweepRowsPerCommit, NativeFilterEnabled, PeriodicCompaction, CompactExpiredShare,
    LegacyRowTimestampKey, UpgradeRowsPerCommit, TestingClockMs, TestingNativeFilterResource)

  private val Hour = 3600L
  private val ThirtyDays = 30L * 24 * Hour

  /** Unset periodic compaction: twice the TTL, within [1 hour, 30 days] (0 with TTL off). */
  def derivedPeriodicCompactionSeconds(ttlMs: Long): Long =
    if (ttlMs <= 0) 0L
    else math.min(math.max(ttlMs / 1000 * 2, Hour), ThirtyDays)

  /** Parses the explicitly set confs for one store; unknown keys under our prefix are errors. */
  def parse(sqlConfs: Map[String, String], scope: StoreScope = StoreScope.Default): TtlStoreSettings = {
    ConfigScope.checkKeys(sqlConfs)
    TtlStoreSettings(
      localDir = Some(LocalDir.readFrom(sqlConfs)).filter(_.nonEmpty),
      blockCacheSizeMb = BlockCacheSizeMb.readFrom(sqlConfs),
      writeBufferSizeMb = WriteBufferSizeMb.readFrom(sqlConfs),
      bloomFilterBitsPerKey = BloomFilterBitsPerKey.readFrom(sqlConfs),
      sstCompression = SstCompression.readFrom(sqlConfs),
      knownKeysCapacity = KnownKeysCapacity.readFrom(sqlConfs),
      ttl = ttlPolicy(sqlConfs, scope),
      allowTtlOnStreamStreamJoin = AllowTtlOnStreamStreamJoin.resolve(sqlConfs, scope).value,
      sweepRowsPerCommit = SweepRowsPerCommit.readFrom(sqlConfs),
      nativeFilter = NativeFilterEnabled.readFrom(sqlConfs),
      periodicCompactionMs = PeriodicCompaction.readFrom(sqlConfs),
      compactExpiredShare = CompactExpiredShare.readFrom(sqlConfs),
      legacyRowTimestamp = LegacyRowTimestampKey.readFrom(sqlConfs),
      upgradeRowsPerCommit = UpgradeRowsPerCommit.readFrom(sqlConfs),
      testingClockMs = TestingClockMs.readFrom(sqlConfs),
      testingNativeFilterResource = TestingNativeFilterResource.readFrom(sqlConfs))
  }

  /** The TTL policy of one store; event time without a column fails naming the keys. */
  def ttlPolicy(sqlConfs: Map[String, String], scope: StoreScope): TtlPolicy = {
    val time = TimeCharacteristicKey.resolve(sqlConfs, scope)
    val column = EventTimeColumn.resolve(sqlConfs, scope)
    if (time.value == TimeCharacteristic.EventTime && column.value.isEmpty) {
      throw TtlStoreErrors.eventTimeColumnMissing(time.setBy.getOrElse(TimeCharacteristicKey.key),
        ConfigScope.candidates(EventTimeColumn, scope).last)
    }
    TtlPolicy(
      ttlMs = Ttl.resolve(sqlConfs, scope).value,
      updateType = UpdateTypeKey.resolve(sqlConfs, scope).value,
      visibility = StateVisibilityKey.resolve(sqlConfs, scope).value,
      timeCharacteristic = time.value,
      eventTimeColumn = column.value.filter(_ => time.value == TimeCharacteristic.EventTime))
  }

  /** The configuration reference, as `docs/configuration.md` holds it (a test keeps them equal). */
  def markdownReference: String = {
    val rows = all.map { k =>
      val scope = if (k.scoped) "global, operator, store" else "global"
      s"| `${k.key}` | `${k.defaultText}` | $scope | ${k.allowed} | ${k.doc} |"
    }
    (Seq(
      "# Configuration reference",
      "",
      "<!-- Generated from io.ttlstore.TtlStoreConfig by `make docs`; do not edit by hand. -->",
      "",
      "Set these like any Spark SQL setting: on the session builder, in spark-defaults.conf, or",
      "with `spark.conf.set` before the query starts. Spark passes them to the provider; an",
      "invalid value or an unknown key under the prefix fails the query with the key's name.",
      "",
      "Settings whose scope includes *operator* and *store* can also be set for one stateful",
      "operator, `" + Prefix + "operator.<operatorId>.<name>`, and for one store of an",
      "operator, `" + Prefix + "operator.<operatorId>.store.<storeName>.<name>`; the most",
      "specific setting wins. Operator ids are the ones Spark shows in the query's progress",
      "(`stateOperators`) and state metadata: 0, 1, ... in plan order.",
      "",
      "| key | default | scope | allowed | meaning |",
      "|---|---|---|---|---|") ++ rows).mkString("", "\n", "\n")
  }
}

/** Prints the configuration reference; `make docs` writes it to docs/configuration.md. */
object ConfigDocs {
  def main(args: Array[String]): Unit = print(TtlStoreConfig.markdownReference)
}
