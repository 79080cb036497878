package io.ttlstore.spark

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.{StateStore, StateStoreIterator, UnsafeRowPair}

/**
 * Spark 4.0's `StateStore` with the members that 4.1 and 4.2 added and ttlstore's store implements
 * on every line. Spark 4.0 never calls them: it aborts a store it does not commit (there is no
 * `release`), and its deduplication reads with `get`.
 */
trait StoreAdapter extends StateStore {
  def release(): Unit
  def keyExists(key: UnsafeRow, colFamilyName: String): Boolean
  def allColumnFamilyNames: Set[String]
  def putList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit
  def mergeList(key: UnsafeRow, values: Array[UnsafeRow], colFamilyName: String): Unit
  def prefixScanWithMultiValues(prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair]
  def iteratorWithMultiValues(colFamilyName: String): StateStoreIterator[UnsafeRowPair]
}
