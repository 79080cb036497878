package io.ttlstore

import java.util.Locale

/** One setting: its name under [[TtlStoreConfig.Prefix]], default, documentation and parser. */
final case class ConfigKey[T](
    name: String,
    default: T,
    doc: String,
    allowed: String,
    parse: String => Option[T]) {

  def key: String = TtlStoreConfig.Prefix + name

  def defaultText: String = default match {
    case s: String if s.isEmpty => "(unset)"
    case other => String.valueOf(other)
  }

  /** The value set in `confs`, or the default; a value that does not parse fails naming the key. */
  def readFrom(confs: Map[String, String]): T = confs.get(key) match {
    case None => default
    case Some(raw) =>
      parse(raw.trim).getOrElse(throw TtlStoreErrors.invalidConfig(key, raw, allowed))
  }
}

/** The settings as parsed once at `init`; nothing else reads the raw configuration. */
final case class TtlStoreSettings(
    localDir: Option[String],
    blockCacheSizeMb: Long,
    writeBufferSizeMb: Int,
    bloomFilterBitsPerKey: Int,
    sstCompression: String,
    knownKeysCapacity: Int)

/**
 * The table of ttlstore's settings. Spark passes a provider every explicitly set session conf that
 * starts with `spark.sql.streaming.stateStore.`; ours live one level below, so a typo in one of
 * them is caught here instead of being ignored.
 */
object TtlStoreConfig {
  val Prefix = "spark.sql.streaming.stateStore.ttlstore."

  private def positiveLong(min: Long, max: Long)(s: String): Option[Long] =
    s.toLongOption.filter(v => v >= min && v <= max)

  private def oneOf(values: String*)(s: String): Option[String] =
    values.find(_.equalsIgnoreCase(s))

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
    positiveLong(0, 1L << 20))

  val WriteBufferSizeMb: ConfigKey[Int] = ConfigKey(
    "writeBufferSizeMB", 16,
    "Size of one RocksDB memtable per store, in MiB.",
    "a whole number of MiB from 1 to 1024",
    s => positiveLong(1, 1024)(s).map(_.toInt))

  val BloomFilterBitsPerKey: ConfigKey[Int] = ConfigKey(
    "bloomFilterBitsPerKey", 10,
    "Bits per key of the SST files' Bloom filters; they make lookups of absent keys (new " +
      "keys, duplicates checks) cheap. 0 turns the filters off.",
    "a whole number from 0 to 64",
    s => positiveLong(0, 64)(s).map(_.toInt))

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
    s => positiveLong(0, 10000000)(s).map(_.toInt))

  val all: Seq[ConfigKey[_]] = Seq(LocalDir, BlockCacheSizeMb, WriteBufferSizeMb,
    BloomFilterBitsPerKey, SstCompression, KnownKeysCapacity)

  /** Parses the explicitly set confs; any key under our prefix that we do not know is an error. */
  def parse(sqlConfs: Map[String, String]): TtlStoreSettings = {
    val known = all.map(_.key).toSet
    sqlConfs.keys.filter(k => k.startsWith(Prefix) && !known.contains(k)).toSeq.sorted
      .headOption.foreach(k => throw TtlStoreErrors.unknownConfig(k, all.map(_.key)))
    TtlStoreSettings(
      localDir = Some(LocalDir.readFrom(sqlConfs)).filter(_.nonEmpty),
      blockCacheSizeMb = BlockCacheSizeMb.readFrom(sqlConfs),
      writeBufferSizeMb = WriteBufferSizeMb.readFrom(sqlConfs),
      bloomFilterBitsPerKey = BloomFilterBitsPerKey.readFrom(sqlConfs),
      sstCompression = SstCompression.readFrom(sqlConfs),
      knownKeysCapacity = KnownKeysCapacity.readFrom(sqlConfs))
  }

  /** The configuration reference, as `docs/configuration.md` holds it (a test keeps them equal). */
  def markdownReference: String = {
    val rows = all.map { k =>
      s"| `${k.key}` | `${k.defaultText}` | ${k.allowed} | ${k.doc} |"
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
      "| key | default | allowed | meaning |",
      "|---|---|---|---|") ++ rows).mkString("", "\n", "\n")
  }
}

/** Prints the configuration reference; `make docs` writes it to docs/configuration.md. */
object ConfigDocs {
  def main(args: Array[String]): Unit = print(TtlStoreConfig.markdownReference)
}
