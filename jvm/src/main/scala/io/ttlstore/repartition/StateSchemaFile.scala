package io.ttlstore.repartition

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.StructType

import io.ttlstore.errors.RepartitionErrors
import io.ttlstore.spark.StateReader

/**
 * The key schema of a classic operator's store, from the schema file Spark writes when the query
 * starts (`spark.sql.streaming.stateStore.stateSchemaCheck`, on by default):
 * `<checkpoint>/state/<operatorId>/0[/<storeName>]/_metadata/schema`, read with Spark's own reader.
 */
object StateSchemaFile {

  def path(checkpoint: Path, operatorId: Long, storeName: String): Path = {
    val partition = new Path(checkpoint, s"state/$operatorId/0")
    val store = if (storeName == "default") partition else new Path(partition, storeName)
    new Path(store, "_metadata/schema")
  }

  def keySchema(checkpoint: Path, operatorId: Long, storeName: String, hadoopConf: Configuration): StructType = {
    val file = path(checkpoint, operatorId, storeName)
    val fs = file.getFileSystem(hadoopConf)
    if (!fs.exists(file)) throw RepartitionErrors.stateSchemaMissing(file.toString)
    val in = fs.open(file)
    try {
      val version = in.readUTF()
      StateReader.keySchema(version, in)
        .getOrElse(throw RepartitionErrors.stateSchemaUnreadable(file.toString, "it names no column family"))
    } catch {
      case NonFatal(e) if !e.isInstanceOf[io.ttlstore.errors.TtlStoreException] =>
        throw RepartitionErrors.stateSchemaUnreadable(file.toString, e.toString)
    } finally in.close()
  }
}
