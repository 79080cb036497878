package io.ttlstore.store.codec

import org.apache.spark.sql.catalyst.util.UnsafeRowUtils
import org.apache.spark.sql.types.StructType

import io.ttlstore.errors.AdoptionErrors
import io.ttlstore.legacy.RocksDbProviderFiles

/** The keys of an adopted checkpoint's rows, as this store encodes keys. */
object LegacyKeys {

  /**
   * A legacy key as this store encodes keys (`codec`, over the columns of `keySchema`). Spark's HDFS
   * provider stores whole key rows; its RocksDB provider prefixes an encoding byte, and lays out
   * prefix-scan keys as prefix and remainder (see [[RocksDbProviderFiles]]). Spark's files carry no
   * checksum, so a whole key is checked against the key schema as Spark's providers check the rows they
   * load (`LEGACY_KEY_MALFORMED`, which the reader turns into the damaged file's name): a damaged length
   * inside a row would otherwise be read past its end later.
   */
  def encoder(codec: KeyCodec, keySchema: StructType): (String, Array[Byte]) => Array[Byte] = codec match {
    case _: PrefixKeyCodec => (provider, raw) =>
        if (provider == "rocksdb") {
          val (prefix, rest) = RocksDbProviderFiles.prefixKey(raw)
          java.nio.ByteBuffer.allocate(4 + prefix.length + rest.length).putInt(prefix.length).put(prefix).put(rest)
            .array()
        } else codec.encode(KeyCodec.rowAt(keySchema.length, raw, 0, raw.length))
    case _ =>
      (provider, raw) => checked(if (provider == "rocksdb") RocksDbProviderFiles.wholeKey(raw) else raw, keySchema)
  }

  private def checked(key: Array[Byte], keySchema: StructType): Array[Byte] = {
    UnsafeRowUtils.validateStructuralIntegrityWithReason(KeyCodec.rowAt(keySchema.length, key, 0, key.length),
      keySchema)
      .foreach(why => throw AdoptionErrors.legacyKeyMalformed(s"it is not a row of the key schema ($why)"))
    key
  }
}
