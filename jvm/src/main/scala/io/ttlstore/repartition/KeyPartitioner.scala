package io.ttlstore.repartition

import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform

import io.ttlstore.bytes.Bytes

/**
 * The partition Spark's shuffle sends a stored state key to, for `numPartitions` partitions.
 *
 * A stateful operator's input is hash-partitioned by its key expressions (Spark's
 * `HashPartitioning`: `pmod(murmur3(key columns, seed 42), numPartitions)`, under
 * `spark.sql.streaming.statefulOperator.useStrictDistribution`), and the state key holds those
 * values in the same order. The partitioning columns are the key's first `hashedColumns`: all of
 * them, except for session windows (the grouping key before the session start, which is the
 * prefix ttlstore stores first) and a join's index store (the join key before the index).
 *
 * Stored keys are ttlstore's (`io.ttlstore.store.codec.KeyCodec`): the key row's bytes, or with a prefix of
 * `numColsPrefixKey` columns, its length, the prefix row and the rest. Pure: no clock, no I/O.
 * Not thread-safe (the projection is reused).
 */
final class KeyPartitioner(keySchema: StructType, numColsPrefixKey: Int, hashedColumns: Int, numPartitions: Int) {
  require(numPartitions > 0, s"$numPartitions partitions")
  require(hashedColumns > 0 && hashedColumns <= keySchema.length,
    s"hashing $hashedColumns columns of a ${keySchema.length}-column key")
  require(numColsPrefixKey == 0 || hashedColumns <= numColsPrefixKey,
    s"hashing $hashedColumns columns with a prefix of $numColsPrefixKey")

  private val partitionId = UnsafeProjection.create(Seq(HashPartitioning(
        keySchema.take(hashedColumns).zipWithIndex.map { case (f, i) => BoundReference(i, f.dataType, f.nullable) }.toSeq,
        numPartitions).partitionIdExpression))

  /** Points at each key in turn: no row is allocated per key. */
  private val row = new UnsafeRow(if (numColsPrefixKey > 0) numColsPrefixKey else keySchema.length)

  def partitionOf(storedKey: Array[Byte]): Int = {
    if (numColsPrefixKey > 0) row.pointTo(storedKey, Platform.BYTE_ARRAY_OFFSET + 4, Bytes.readInt(storedKey, 0))
    else row.pointTo(storedKey, Platform.BYTE_ARRAY_OFFSET, storedKey.length)
    partitionId(row).getInt(0)
  }
}
