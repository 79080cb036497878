package io.ttlstore

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.execution.datasources.v2.state.StateDataSource
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{BooleanType, StructField, StructType, TimestampType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * `spark.read.format("ttlstore_state")`: Spark's state data source (`statestore`) on a ttlstore
 * checkpoint, with three more columns that only ttlstore knows: `written_at` (the row's stored
 * timestamp: its last write in processing time, its event time in event time), `expires_at`
 * (`written_at + ttl`, null when TTL is off) and `expired`. Expiry is judged as the query judged
 * that version (the TTL settings and time recorded with it); option `includeExpired` shows the
 * expired rows still stored instead of hiding them.
 *
 * Everything else (options `batchId`, `operatorId`, `storeName`, `snapshotStartBatchId`, schemas,
 * partitions) is Spark's own reader, which this source wraps; the ttlstore store it opens tells each
 * row's timestamp through [[RowTimes]].
 */
class TtlStateSource extends TableProvider with DataSourceRegister {
  import TtlStateSource._

  override def shortName(): String = ShortName

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    checkOptions(options.asScala.toMap)
    withTimes(new StateDataSource().inferSchema(spark(options.asScala.toMap)))
  }

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val props = properties.asScala.toMap
    checkOptions(props)
    val inner = new StateDataSource()
    val innerOptions = spark(props)
    val innerSchema = inner.inferSchema(innerOptions)
    val table = inner.getTable(innerSchema, partitioning, innerOptions.asCaseSensitiveMap())
    new TimedTable(table.asInstanceOf[SupportsRead], withTimes(innerSchema), includeExpired(props),
      props.getOrElse("path", "(no path)"))
  }

  override def supportsExternalMetadata(): Boolean = false
}

object TtlStateSource {
  val ShortName = "ttlstore_state"
  val IncludeExpired = "includeExpired"

  /** The columns added to Spark's `key`, `value`, `partition_id`. */
  val TimeColumns: Seq[StructField] = Seq(
    StructField("written_at", TimestampType, nullable = true),
    StructField("expires_at", TimestampType, nullable = true),
    StructField("expired", BooleanType, nullable = false))

  /** Spark's reader options that read something other than one store's rows. */
  private val Refused = Map(
    "readChangeFeed" -> "the change feed has no timestamps to add",
    "joinSide" -> "a join side combines two stores, and join stores have no TTL by default",
    "stateVarName" -> "state variables belong to transformWithState, which ttlstore cannot serve")

  private def withTimes(schema: StructType): StructType = StructType(schema.fields ++ TimeColumns)

  private def includeExpired(options: Map[String, String]): Boolean =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(IncludeExpired) => v.trim.toLowerCase } match {
      case None | Some("false") => false
      case Some("true") => true
      case Some(other) => throw TtlStoreErrors.invalidConfig(IncludeExpired, other, "true or false")
    }

  private def checkOptions(options: Map[String, String]): Unit = {
    includeExpired(options)
    options.keys.foreach { k =>
      Refused.collectFirst { case (name, why) if name.equalsIgnoreCase(k) => (name, why) }.foreach {
        case (name, why) => throw TtlStoreErrors.stateSourceOptionRefused(ShortName, name, why)
      }
    }
  }

  /** The options for Spark's reader: all but ours. */
  private def spark(options: Map[String, String]): CaseInsensitiveStringMap =
    new CaseInsensitiveStringMap(options.filter { case (k, _) => !k.equalsIgnoreCase(IncludeExpired) }.asJava)

  private[ttlstore] def micros(ms: Long): Any =
    if (ms == Long.MaxValue || ms == EventTimeColumn.NoTime || ms > Long.MaxValue / 1000L ||
        ms < Long.MinValue / 1000L) null
    else ms * 1000L
}

private final class TimedTable(inner: SupportsRead, tableSchema: StructType, includeExpired: Boolean,
    checkpoint: String) extends Table with SupportsRead {
  override def name(): String = s"${TtlStateSource.ShortName}(${inner.name()})"
  override def schema(): StructType = tableSchema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    val innerBuilder = inner.newScanBuilder(options)
    () => new TimedScan(innerBuilder.build(), tableSchema, includeExpired, checkpoint)
  }
}

private final class TimedScan(inner: Scan, scanSchema: StructType, includeExpired: Boolean,
    checkpoint: String) extends Scan with Batch {
  private lazy val batch = inner.toBatch
  override def readSchema(): StructType = scanSchema
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = batch.planInputPartitions()
  override def createReaderFactory(): PartitionReaderFactory =
    TimedReaderFactory(batch.createReaderFactory(), includeExpired, checkpoint)
}

private final case class TimedReaderFactory(inner: PartitionReaderFactory, includeExpired: Boolean,
    checkpoint: String) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TimedPartitionReader(inner, partition, includeExpired, checkpoint)
}

/** Spark's partition reader with the [[RowTimes]] of its ttlstore store appended to each row. */
private final class TimedPartitionReader(factory: PartitionReaderFactory, partition: InputPartition,
    includeExpired: Boolean, checkpoint: String) extends PartitionReader[InternalRow] {
  private val times = new RowTimes(includeExpired)
  private val inner = RowTimes.during(times)(factory.createReader(partition))
  private val extra = new GenericInternalRow(TtlStateSource.TimeColumns.length)
  private val joined = new JoinedRow()
  private var checked = false

  override def next(): Boolean = {
    val more = RowTimes.during(times)(inner.next())
    if (!checked) {
      checked = true
      if (!times.claimed) throw TtlStoreErrors.notTtlstoreState(checkpoint, TtlStateSource.ShortName)
    }
    more
  }

  override def get(): InternalRow = {
    extra.update(0, TtlStateSource.micros(times.writtenAt))
    extra.update(1, times.expiresAt.map(TtlStateSource.micros).orNull)
    extra.update(2, times.expired)
    joined(inner.get(), extra)
  }

  override def close(): Unit = RowTimes.during(times)(inner.close())
}
