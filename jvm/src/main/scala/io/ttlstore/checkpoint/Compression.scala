package io.ttlstore.checkpoint

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

  /** `org.apache.spark.io.ZStdCompressionCodec` -> `zstd`; short names stay as they are. */
  def shortName(name: String): String =
    name.split('.').last.stripSuffix("CompressionCodec").toLowerCase(java.util.Locale.ROOT)
}
