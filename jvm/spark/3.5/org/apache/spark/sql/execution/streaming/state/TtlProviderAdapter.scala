package org.apache.spark.sql.execution.streaming.state

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.types.StructType

import io.ttlstore.spark.LineChecked

/**
 * Spark 3.5's provider API in the terms ttlstore's provider implements (Spark 4.3's): 3.5's `init`
 * names the prefix-key columns where 4.x passes a key encoder spec, `getStore` and `getReadStore`
 * take a version alone, an aggregation opens its read and its write store apart (no
 * `upgradeReadStoreToWriteStore`), maintenance runs through `doMaintenance()` alone
 * ([[SplitMaintenance]]), and there is no state reader to replay for ([[FineGrainedReplay]]).
 */
abstract class TtlProviderAdapter extends LineChecked with StateStoreProvider with FineGrainedReplay
  with SplitMaintenance {

  def init(stateStoreId: StateStoreId, keySchema: StructType, valueSchema: StructType,
      keyStateEncoderSpec: KeyStateEncoderSpec, useColumnFamilies: Boolean, storeConf: StateStoreConf,
      hadoopConf: Configuration, useMultipleValuesPerKey: Boolean,
      stateSchemaProvider: Option[StateSchemaProvider]): Unit

  override def init(stateStoreId: StateStoreId, keySchema: StructType, valueSchema: StructType,
      numColsPrefixKey: Int, storeConf: StateStoreConf, hadoopConf: Configuration): Unit = {
    val spec =
      if (numColsPrefixKey > 0) PrefixKeyScanStateEncoderSpec(keySchema, numColsPrefixKey)
      else NoPrefixKeyStateEncoderSpec(keySchema)
    init(stateStoreId, keySchema, valueSchema, spec, useColumnFamilies = false, storeConf, hadoopConf,
      useMultipleValuesPerKey = false, stateSchemaProvider = None)
  }

  def getStore(version: Long, stateStoreCkptId: Option[String], forceSnapshotOnCommit: Boolean,
      loadEmpty: Boolean): StateStore

  override def getStore(version: Long): StateStore =
    getStore(version, None, forceSnapshotOnCommit = false, loadEmpty = false)

  def getReadStore(version: Long, stateStoreCkptId: Option[String]): ReadStateStore

  override def getReadStore(version: Long): ReadStateStore = getReadStore(version, None)

  /** Never called by Spark 3.5; the provider implements it for the later lines. */
  def upgradeReadStoreToWriteStore(readStore: ReadStateStore, version: Long, uniqueId: Option[String],
      forceSnapshotOnCommit: Boolean): StateStore
}
