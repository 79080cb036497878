package io.ttlstore

import java.io.File
import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** Schemas, rows and loan helpers shared by the JVM suites. */
object StoreFixtures {
  val keySchema: StructType = StructType(Seq(
      StructField("user", StringType), StructField("session", IntegerType)))
  val valueSchema: StructType = StructType(Seq(StructField("count", LongType)))

  private val keyProjection = UnsafeProjection.create(keySchema)
  private val prefixProjection = UnsafeProjection.create(StructType(keySchema.take(1)))
  private val valueProjection = UnsafeProjection.create(valueSchema)

  def key(user: String, session: Int = 0): UnsafeRow =
    keyProjection(InternalRow(UTF8String.fromString(user), session)).copy()

  def prefix(user: String): UnsafeRow = prefixProjection(InternalRow(UTF8String.fromString(user))).copy()

  def value(count: Long): UnsafeRow = valueProjection(InternalRow(count)).copy()

  def keyOf(row: UnsafeRow): (String, Int) = (row.getUTF8String(0).toString, row.getInt(1))
  def countOf(row: UnsafeRow): Long = row.getLong(0)

  /** The whole content of a store as plain Scala values. */
  def contents(store: ReadStateStore): Map[(String, Int), Long] =
    store.iterator().map(p => keyOf(p.key) -> countOf(p.value)).toMap

  def storeConf(settings: (String, String)*): StateStoreConf = {
    val sqlConf = new SQLConf()
    sqlConf.setConfString("spark.sql.streaming.stateStore.minDeltasForSnapshot", "3")
    sqlConf.setConfString("spark.sql.streaming.minBatchesToRetain", "5")
    settings.foreach { case (k, v) => sqlConf.setConfString(k, v) }
    new StateStoreConf(sqlConf)
  }

  def withTempDir[T](body: File => T): T = {
    val dir = Files.createTempDirectory("ttlstore-test").toFile
    try body(dir)
    finally FileUtils.deleteQuietly(dir)
  }

  def newProvider(
      className: String,
      checkpoint: File,
      conf: StateStoreConf = storeConf(),
      spec: KeyStateEncoderSpec = NoPrefixKeyStateEncoderSpec(keySchema),
      partition: Int = 0,
      storeName: String = StateStoreId.DEFAULT_STORE_NAME,
      operatorId: Long = 0L,
      /** The checkpoint's location when not `checkpoint` itself (another file system's URI of it). */
      location: Option[String] = None,
      hadoop: Configuration = new Configuration(),
      /** ttlstore's provider only: the processing-time clock it judges and stamps by (see [[TtlHarness]]). */
      clock: Option[io.ttlstore.ttl.Clock] = None): StateStoreProvider = {
    val provider =
      if (clock.isDefined) new TtlStateStoreProvider(clock)
      else Class.forName(className).getDeclaredConstructor().newInstance().asInstanceOf[StateStoreProvider]
    val hadoopConf = new Configuration(hadoop)
    // Spark's HDFS provider insists on the streaming query's run id, as a running query sets it.
    hadoopConf.set(org.apache.spark.sql.execution.streaming.runtime.StreamExecution.RUN_ID_KEY,
      java.util.UUID.randomUUID().toString)
    provider.init(StateStoreId(location.getOrElse(checkpoint.getAbsolutePath), operatorId, partition, storeName),
      keySchema,
      valueSchema, spec, useColumnFamilies = false, conf, hadoopConf,
      useMultipleValuesPerKey = false, stateSchemaProvider = None)
    provider
  }

  /** A small local Spark for the end-to-end suites: no UI, 2 shuffle partitions, and `conf`. */
  def localSpark(appName: String, master: String, conf: (String, String)*): org.apache.spark.sql.SparkSession =
    conf.foldLeft(org.apache.spark.sql.SparkSession.builder().master(master).appName(appName)
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")) {
      case (b, (k, v)) => b.config(k, v)
    }.getOrCreate()

  /** Loan pattern: the provider is closed whatever the body does. */
  def withProvider[P <: StateStoreProvider, T](provider: P)(body: P => T): T =
    try body(provider)
    finally provider.close()

  /** Commits one version made of `changes` (Some = put, None = remove) on top of `version`. */
  def commitVersion(provider: StateStoreProvider, version: Long,
      changes: ((String, Int), Option[Long])*): Long = {
    val store = provider.getStore(version)
    changes.foreach {
      case ((user, session), Some(count)) => store.put(key(user, session), value(count))
      case ((user, session), None) => store.remove(key(user, session))
    }
    store.commit()
  }

  def read(provider: StateStoreProvider, version: Long): Map[(String, Int), Long] = {
    val store = provider.getReadStore(version)
    try contents(store)
    finally store.release()
  }

  val HdfsProvider = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
  val TtlProvider: String = classOf[TtlStateStoreProvider].getName
}
