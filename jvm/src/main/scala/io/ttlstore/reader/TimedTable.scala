package io.ttlstore.reader

import java.util

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.{BooleanType, StructField, StructType, TimestampType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.ttl.EventTimeColumn
import io.ttlstore.store.version.RowTimes

/**
 * Spark's state reader table, scan and partition reader wrapped so that every row gains the
 * `written_at`, `expires_at` and `expired` columns of [[io.ttlstore.TtlStateSource]].
 */
private[ttlstore] final class TimedTable(inner: SupportsRead, tableSchema: StructType, includeExpired: Boolean,
    checkpoint: String) extends Table with SupportsRead {
  override def name(): String = s"${TimedTable.SourceName}(${inner.name()})"
  override def schema(): StructType = tableSchema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    val innerBuilder = inner.newScanBuilder(options)
    () => new TimedScan(innerBuilder.build(), tableSchema, includeExpired, checkpoint)
  }
}

private[ttlstore] final class TimedScan(inner: Scan, scanSchema: StructType, includeExpired: Boolean,
    checkpoint: String) extends Scan with Batch {
  private lazy val batch = inner.toBatch
  override def readSchema(): StructType = scanSchema
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = batch.planInputPartitions()
  override def createReaderFactory(): PartitionReaderFactory =
    TimedReaderFactory(batch.createReaderFactory(), includeExpired, checkpoint)
}

private[ttlstore] final case class TimedReaderFactory(inner: PartitionReaderFactory, includeExpired: Boolean,
    checkpoint: String) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TimedPartitionReader(inner, partition, includeExpired, checkpoint)
}

/** Spark's partition reader with the [[RowTimes]] of its ttlstore store appended to each row. */
private[ttlstore] final class TimedPartitionReader(factory: PartitionReaderFactory, partition: InputPartition,
    includeExpired: Boolean, checkpoint: String) extends PartitionReader[InternalRow] {
  private val times = new RowTimes(includeExpired)
  private val inner = RowTimes.during(times)(factory.createReader(partition))
  private val extra = new GenericInternalRow(TimedTable.TimeColumns.length)
  private val joined = new JoinedRow()
  private var checked = false

  override def next(): Boolean = {
    val more = RowTimes.during(times)(inner.next())
    if (!checked) {
      checked = true
      if (!times.claimed) throw TtlStoreErrors.notTtlstoreState(checkpoint, TimedTable.SourceName)
    }
    more
  }

  override def get(): InternalRow = {
    extra.update(0, TimedTable.micros(times.writtenAt))
    extra.update(1, times.expiresAt.map(TimedTable.micros).orNull)
    extra.update(2, times.expired)
    joined(inner.get(), extra)
  }

  override def close(): Unit = RowTimes.during(times)(inner.close())
}

private[ttlstore] object TimedTable {

  /** The short name of [[io.ttlstore.TtlStateSource]]. */
  val SourceName = "ttlstore_state"

  /** The columns added to Spark's `key`, `value`, `partition_id`. */
  val TimeColumns: Seq[StructField] = Seq(
    StructField("written_at", TimestampType, nullable = true),
    StructField("expires_at", TimestampType, nullable = true),
    StructField("expired", BooleanType, nullable = false))

  /** Epoch milliseconds as Spark's timestamp (microseconds); null for "no time" and out of range. */
  def micros(ms: Long): Any =
    if (ms == Long.MaxValue || ms == EventTimeColumn.NoTime || ms > Long.MaxValue / 1000L ||
      ms < Long.MinValue / 1000L) null
    else ms * 1000L
}
