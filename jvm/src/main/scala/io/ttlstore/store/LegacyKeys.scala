package io.ttlstore.store

import io.ttlstore.legacy.RocksDbProviderFiles

/** The keys of an adopted checkpoint's rows, as this store encodes keys. */
object LegacyKeys {

  /**
   * A legacy key as this store encodes keys (`codec`, over `keyFields` key columns). Spark's HDFS
   * provider stores whole key rows; its RocksDB provider prefixes an encoding byte, and lays out
   * prefix-scan keys as prefix and remainder (see [[RocksDbProviderFiles]]).
   */
  def encoder(codec: KeyCodec, keyFields: Int): (String, Array[Byte]) => Array[Byte] = codec match {
    case _: PrefixKeyCodec => (provider, raw) =>
        if (provider == "rocksdb") {
          val (prefix, rest) = RocksDbProviderFiles.prefixKey(raw)
          java.nio.ByteBuffer.allocate(4 + prefix.length + rest.length).putInt(prefix.length).put(prefix).put(rest)
            .array()
        } else codec.encode(KeyCodec.rowAt(keyFields, raw, 0, raw.length))
    case _ => (provider, raw) => if (provider == "rocksdb") RocksDbProviderFiles.wholeKey(raw) else raw
  }
}
