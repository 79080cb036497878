package io.ttlstore.spark

import org.apache.hadoop.fs.FSDataInputStream
import org.apache.spark.sql.connector.catalog.TableProvider
import org.apache.spark.sql.execution.datasources.v2.state.StateDataSource
import org.apache.spark.sql.execution.streaming.state.SchemaHelper
import org.apache.spark.sql.types.StructType

/** Spark's state data source (`format("statestore")`, 4.0 and later) and its schema files. */
object StateReader {

  /** Spark's state reader, which `format("ttlstore_state")` wraps. */
  def source(): TableProvider = new StateDataSource()

  /** The key schema of a store's `_metadata/schema` file of `version` (the first column family's). */
  def keySchema(version: String, in: FSDataInputStream): Option[StructType] =
    SchemaHelper.SchemaReader.createSchemaReader(version).read(in).headOption.map(_.keySchema)
}
