package io.ttlstore.repartition

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.functions.{col, spark_partition_id}
import org.apache.spark.sql.types.StructType
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures
import io.ttlstore.config.ConfigKey
import io.ttlstore.store.codec.{KeyCodec, PrefixKeyCodec}

/**
 * A stored key goes to the partition Spark's shuffle sends its row to: the partition ids come from
 * real shuffles (`repartition(n, key columns)`, the hash partitioning a stateful operator's input
 * gets), the keys from the same rows as ttlstore stores them.
 */
class KeyPartitionerSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark: SparkSession = StoreFixtures.localSpark("key-partitioner", "local[2]")

  override def afterAll(): Unit = spark.stop()

  private def keys: DataFrame = spark.range(0, 2000).selectExpr(
    "concat('user-', id % 700) AS user",
    "named_struct('start', timestamp_seconds(id % 13 * 60), 'end', timestamp_seconds(id % 13 * 60 + 60)) AS window",
    "CAST(id % 3 AS INT) AS shard",
    "id AS index")

  /** (stored key, the partition Spark's shuffle by `hashed` sent its row to) for key columns `keyColumns`. */
  private def shuffled(keyColumns: Seq[String], hashed: Seq[String], n: Int, store: (StructType, Int) => KeyCodec)
      : Seq[(Array[Byte], Int)] = {
    val rows = keys.repartition(n, hashed.map(col): _*).select((keyColumns.map(col) :+ spark_partition_id()): _*)
    val schema = StructType(rows.schema.fields.dropRight(1))
    val toKey = UnsafeProjection.create(schema.fields.zipWithIndex.map { case (f, i) =>
      BoundReference(i, f.dataType, f.nullable)
    }.toSeq)
    val codec = store(schema, hashed.size)
    rows.queryExecution.toRdd.map(_.copy()).collect().toSeq.map(r => codec.encode(toKey(r)) -> r.getInt(schema.length))
  }

  private def whole(schema: StructType, hashed: Int): KeyCodec = KeyCodec(
    org.apache.spark.sql.execution.streaming.state.NoPrefixKeyStateEncoderSpec(schema), schema)

  test("an aggregation's key, a string and a window struct, goes where the shuffle sends it") {
    val rows = shuffled(Seq("window", "user"), Seq("window", "user"), 7, whole)
    val partitioner = new KeyPartitioner(StructType(keys.select("window", "user").schema.fields), 0, 2, 7)
    assert(rows.map(_._2).distinct.size == 7)
    assert(rows.forall { case (k, p) => partitioner.partitionOf(k) == p })
  }

  test("a session window's key goes where the shuffle by its grouping key (the prefix) sends it") {
    val rows = shuffled(Seq("user", "index"), Seq("user"), 5, (s, p) => new PrefixKeyCodec(s, p))
    val partitioner = new KeyPartitioner(keys.select("user", "index").schema, 1, 1, 5)
    assert(rows.forall { case (k, p) => partitioner.partitionOf(k) == p })
  }

  test("a join's index store key goes where the shuffle by the join key (all but the index) sends it") {
    val rows = shuffled(Seq("user", "shard", "index"), Seq("user", "shard"), 3, whole)
    val partitioner = new KeyPartitioner(keys.select("user", "shard", "index").schema, 0, 2, 3)
    assert(rows.forall { case (k, p) => partitioner.partitionOf(k) == p })
  }

  test("a partitioner that hashes one column too many sends keys elsewhere") {
    val rows = shuffled(Seq("user", "shard", "index"), Seq("user", "shard"), 3, whole)
    val wrong = new KeyPartitioner(keys.select("user", "shard", "index").schema, 0, 3, 3)
    assert(rows.count { case (k, p) => wrong.partitionOf(k) != p } > rows.size / 2)
  }

  test("the provider class the offset log pins is ttlstore's") {
    assert(ConfigKey.ProviderClass == classOf[io.ttlstore.TtlStateStoreProvider].getName)
  }
}
