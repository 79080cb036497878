package io.ttlstore.checkpoint

import java.io.{BufferedInputStream, InputStream}

import org.apache.spark.SparkConf
import org.apache.spark.io.{CompressionCodec, LZ4CompressionCodec, LZFCompressionCodec, SnappyCompressionCodec, ZStdCompressionCodec}

import io.ttlstore.errors.TtlStoreErrors

/** Spark's compression codecs by the names Spark's state stores use for them. */
object Compression {

  /** The setting that names the codec of state files (ttlstore's and Spark's providers'). */
  val Key = "spark.sql.streaming.stateStore.compression.codec"

  /**
   * Spark's codec named by `spark.sql.streaming.stateStore.compression.codec`: a short name, or
   * the class name of one of Spark's codecs (Spark accepts both).
   */
  def codec(name: String): CompressionCodec = {
    val conf = new SparkConf(false)
    shortName(name) match {
      case "lz4" => new LZ4CompressionCodec(conf)
      case "zstd" => new ZStdCompressionCodec(conf)
      case "snappy" => new SnappyCompressionCodec(conf)
      case "lzf" => new LZFCompressionCodec(conf)
      case other => throw TtlStoreErrors.unknownCodec(other, Key)
    }
  }

  /**
   * The decompressed stream of `raw`, written with the codec `name`. An lz4 stream's block headers
   * are checked first ([[Lz4Blocks]]), so a damaged one fails instead of allocating what it claims.
   */
  def inputStream(name: String, raw: InputStream): InputStream = {
    val c = codec(name)
    if (shortName(name) == "lz4") c.compressedInputStream(new Lz4Blocks(new BufferedInputStream(raw, 64 * 1024)))
    else c.compressedInputStream(raw)
  }

  /** `org.apache.spark.io.ZStdCompressionCodec` -> `zstd`; short names stay as they are. */
  def shortName(name: String): String =
    name.split('.').last.stripSuffix("CompressionCodec").toLowerCase(java.util.Locale.ROOT)
}
