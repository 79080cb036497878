package io.ttlstore.store.rocksdb

import org.rocksdb._

import io.ttlstore.config.TtlStoreSettings

/**
 * How a store's column families are laid out in RocksDB: table format, memtables, compression and
 * compaction, each chosen by measurement (docs/performance.md names the runs). Both families get
 * the same options; [[RocksDbHandle.open]] adds the TTL filter to the timestamped one.
 */
object FamilyOptions {
  private val DataBlockBytes = 4 * 1024
  private val MetadataBlockBytes = 4 * 1024

  /**
   * L0 files that start a compaction (RocksDB's default: 4). A snapshot leaves two (the background
   * flush at open, then the commit's), so at 4 the rewrite of all of a store's keys came half as
   * often again where every batch writes (docs/performance.md, "Six L0 files per compaction").
   */
  private val L0FilesPerCompaction = 6

  /**
   * The L0 trigger of a store that only reads ([[ReadTuning]]): RocksDB
   * merges L0 into the base level at once, and a read then checks one filter where it checked three.
   */
  private val L0FilesPerCompactionReadOnly = 1

  /**
   * The memtable's whole-key Bloom filter, as a share of the memtable's size: 1.3 MiB for 64 MiB,
   * about 10 bits for each of the ~800,000 rows a memtable of this layout holds. Turned on only for
   * large stores ([[ReadTuning]]): it costs its full size in every memtable.
   */
  private val MemtableFilterShare = 0.02

  /**
   * The memtables' allocation unit. RocksDB's default (1 MiB for 64 MiB memtables) gives each store
   * that was written at least 1 MiB: 200 MiB for 200 partitions, past a bounded budget before any
   * store has much data, so every write flushed. 64 KiB: 24 MiB for the same 200 stores, and no
   * difference in write speed at 1M keys per store (docs/performance.md, "Bounded memory").
   */
  private val ArenaBlockBytes = 64L * 1024

  /**
   * How hard RocksDB erases the cached blocks of a file a compaction (or the TTL filter's) made
   * obsolete, where the line's RocksDB has `uncache_aggressiveness` (9.6 on; Spark 3.5's 8.3.2 has
   * not): 300, "erase while a tenth of the attempts still find a block", the value RocksDB names as
   * its likely default. Without it the shared cache keeps the blocks of replaced files until the
   * LRU pushes them out, and so fills to its budget whatever the live set. Set through RocksDB's own
   * options parser, which RocksJava's setters do not reach.
   */
  private val UncacheAggressiveness = 300

  /**
   * RocksDB's default options with `uncache_aggressiveness`, or None where this RocksDB does not
   * know it (its parser refuses an unknown option).
   */
  private def withUncaching(): Option[ColumnFamilyOptions] = {
    val props = new java.util.Properties()
    props.setProperty("uncache_aggressiveness", UncacheAggressiveness.toString)
    Option(ColumnFamilyOptions.getColumnFamilyOptionsFromProps(props))
  }

  /** Whether this RocksDB erases the cached blocks of obsolete files ([[UncacheAggressiveness]]). */
  lazy val uncachesObsoleteFiles: Boolean = withUncaching().map(_.close()).isDefined

  /**
   * The options every family starts from: RocksDB's defaults, with uncaching where it has it (asked
   * once per JVM, so a RocksDB without it is not asked at every open).
   */
  private def baseOptions(): ColumnFamilyOptions =
    (if (uncachesObsoleteFiles) withUncaching() else None).getOrElse(new ColumnFamilyOptions())

  /** A Bloom filter for one family's SST files; None with `bloomFilterBitsPerKey` 0. */
  def bloomFilter(settings: TtlStoreSettings): Option[BloomFilter] =
    Some(settings.bloomFilterBitsPerKey).filter(_ > 0).map(bits => new BloomFilter(bits.toDouble))

  /**
   * The table layout, chosen by measurement (docs/performance.md, "The lookup cliff" and "Index
   * and filters beside the cache"). By default each file's index and filter blocks are loaded
   * when RocksDB opens the file and held beside the cache, as Spark's provider holds them: a
   * file a compaction has just written serves lookups at once (with them in the cache, the
   * first batches after a compaction at 4M keys per store cost 13-15 µs per row instead of 8-9).
   * With `indexAndFiltersInCache` they are partitioned into blocks of `MetadataBlockBytes`,
   * cached with high priority, with only their top level pinned: a whole-file filter block
   * (~1.2 MiB per million keys) larger than one shard of the LRU cache (1 MiB for 64 MiB) could
   * never stay cached, and was read again on most lookups (15 s batches instead of 1 s at 1M keys
   * per store). Small data blocks keep a lookup that misses the cache cheap (one 4 KiB read), as
   * Spark's provider does.
   */
  def apply(settings: TtlStoreSettings, cache: Cache, bloom: Option[BloomFilter]): ColumnFamilyOptions = {
    val table = new BlockBasedTableConfig()
      .setBlockCache(cache)
      .setBlockSize(DataBlockBytes)
      .setFormatVersion(5)
    if (settings.indexAndFiltersInCache) {
      table
        .setIndexType(IndexType.kTwoLevelIndexSearch)
        .setPartitionFilters(true)
        .setMetadataBlockSize(MetadataBlockBytes)
        .setCacheIndexAndFilterBlocks(true)
        .setCacheIndexAndFilterBlocksWithHighPriority(true)
        .setPinTopLevelIndexAndFilter(true)
        .setPinL0FilterAndIndexBlocksInCache(true)
    } else table.setCacheIndexAndFilterBlocks(false)
    bloom.foreach(table.setFilterPolicy(_))
    baseOptions()
      .setTableFormatConfig(table)
      .setWriteBufferSize(settings.writeBufferSizeMb.toLong * 1024 * 1024)
      .setMaxWriteBufferNumber(2)
      .setArenaBlockSize(ArenaBlockBytes)
      .setCompressionType(compression(settings.sstCompression))
      .setLevelCompactionDynamicLevelBytes(true)
      .setLevel0FileNumCompactionTrigger(L0FilesPerCompaction)
  }

  /** The mutable options that turn the memtable's whole-key filter on; it serves from the next memtable. */
  def memtableFilter: MutableColumnFamilyOptions =
    MutableColumnFamilyOptions.builder()
      .setMemtablePrefixBloomSizeRatio(MemtableFilterShare)
      .setMemtableWholeKeyFiltering(true)
      .build()

  /** The mutable options of the L0 trigger, for a store that only reads or one that writes. */
  def l0Trigger(readOnly: Boolean): MutableColumnFamilyOptions =
    MutableColumnFamilyOptions.builder()
      .setLevel0FileNumCompactionTrigger(if (readOnly) L0FilesPerCompactionReadOnly else L0FilesPerCompaction)
      .build()

  private def compression(name: String): CompressionType = name match {
    case "lz4" => CompressionType.LZ4_COMPRESSION
    case "zstd" => CompressionType.ZSTD_COMPRESSION
    case "snappy" => CompressionType.SNAPPY_COMPRESSION
    case _ => CompressionType.NO_COMPRESSION
  }
}
