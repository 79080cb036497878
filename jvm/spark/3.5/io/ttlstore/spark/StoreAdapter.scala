package io.ttlstore.spark

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state._
import org.apache.spark.sql.types.StructType

/**
 * Spark 3.5's `StateStore` in the terms of the later lines, which ttlstore's store implements: 3.5
 * names no column family (every call is the default family's) and calls none of the members 4.x added.
 */
trait StoreAdapter extends StateStore {

  /** The store's one column family (`io.ttlstore.store.version.StoreVersion.DefaultColumnFamily`). */
  private val Default = "default"

  def get(key: UnsafeRow, colFamilyName: String): UnsafeRow
  def iterator(colFamilyName: String): StateStoreIterator[UnsafeRowPair]
  def prefixScan(prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair]
  def put(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit
  def remove(key: UnsafeRow, colFamilyName: String): Unit

  override def get(key: UnsafeRow): UnsafeRow = get(key, Default)
  override def iterator(): Iterator[UnsafeRowPair] = iterator(Default)
  override def prefixScan(prefixKey: UnsafeRow): Iterator[UnsafeRowPair] =
    prefixScan(prefixKey, Default)
  override def put(key: UnsafeRow, value: UnsafeRow): Unit = put(key, value, Default)
  override def remove(key: UnsafeRow): Unit = remove(key, Default)

  def release(): Unit
  def keyExists(key: UnsafeRow, colFamilyName: String): Boolean
  def getStateStoreCheckpointInfo(): StateStoreCheckpointInfo
  def allColumnFamilyNames: Set[String]
  def createColFamilyIfAbsent(colFamilyName: String, keySchema: StructType, valueSchema: StructType,
      keyStateEncoderSpec: KeyStateEncoderSpec, useMultipleValuesPerKey: Boolean, isInternal: Boolean): Unit
  def removeColFamilyIfExists(colFamilyName: String): Boolean
  def putList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit
  def merge(key: UnsafeRow, value: UnsafeRow, colFamilyName: String): Unit
  def mergeList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit
  def valuesIterator(key: UnsafeRow, colFamilyName: String): Iterator[UnsafeRow]
  def prefixScanWithMultiValues(prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair]
  def iteratorWithMultiValues(colFamilyName: String): StateStoreIterator[UnsafeRowPair]
}
