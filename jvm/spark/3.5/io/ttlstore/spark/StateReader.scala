package io.ttlstore.spark

import org.apache.hadoop.fs.FSDataInputStream
import org.apache.spark.sql.connector.catalog.TableProvider
import org.apache.spark.sql.execution.streaming.state.SchemaHelper
import org.apache.spark.sql.types.StructType

import io.ttlstore.errors.LineErrors

/** Spark 3.5 has no state data source (`format("statestore")` came with 4.0); its schema files name one store. */
object StateReader {

  def source(): TableProvider = throw LineErrors.stateReaderNotInSpark(org.apache.spark.SPARK_VERSION)

  /** The key schema of a store's `_metadata/schema` file of `version`. */
  def keySchema(version: String, in: FSDataInputStream): Option[StructType] =
    Some(SchemaHelper.SchemaReader.createSchemaReader(version).read(in)._1)
}
