package io.ttlstore.reader

import java.util
import java.util.Locale

import io.ttlstore.compat.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.spark.StateReader

/**
 * What `spark.read.format("ttlstore_state")` ([[io.ttlstore.TtlStateSource]], which Spark finds by
 * name and which hands each read here once the jar's line is checked) does: Spark's state data source (`statestore`) on a ttlstore
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
final class TimedStateSource extends TableProvider {
  import TimedStateSource._

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    checkOptions(options.asScala.toMap)
    withTimes(StateReader.source().inferSchema(spark(options.asScala.toMap)))
  }

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val props = properties.asScala.toMap
    checkOptions(props)
    val inner = StateReader.source()
    val innerOptions = spark(props)
    val innerSchema = inner.inferSchema(innerOptions)
    val table = inner.getTable(innerSchema, partitioning, innerOptions.asCaseSensitiveMap())
    new TimedTable(table.asInstanceOf[SupportsRead], withTimes(innerSchema), includeExpired(props),
      props.getOrElse("path", "(no path)"))
  }

  override def supportsExternalMetadata(): Boolean = false
}

object TimedStateSource {
  val ShortName: String = TimedTable.SourceName
  val IncludeExpired = "includeExpired"
  val TimeColumns: Seq[StructField] = TimedTable.TimeColumns

  /** Spark's reader options that read something other than one store's rows. */
  private val Refused = Map(
    "readChangeFeed" -> "the change feed has no timestamps to add",
    "joinSide" -> "a join side combines two stores, and join stores have no TTL by default",
    "stateVarName" -> "state variables belong to transformWithState, which ttlstore cannot serve")

  private def withTimes(schema: StructType): StructType = StructType(schema.fields ++ TimeColumns)

  private def includeExpired(options: Map[String, String]): Boolean =
    options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(IncludeExpired) => v.trim.toLowerCase(Locale.ROOT)
    } match {
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
}
