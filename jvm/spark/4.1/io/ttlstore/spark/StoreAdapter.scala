package io.ttlstore.spark

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.streaming.state.{StateStore, StateStoreIterator, UnsafeRowPair}

/**
 * Spark 4.1's `StateStore` with the members that 4.2 added and ttlstore's store implements on
 * every line; Spark 4.1 never calls them (its deduplication reads with `get`).
 */
trait StoreAdapter extends StateStore {
  def keyExists(key: UnsafeRow, colFamilyName: String): Boolean
  def allColumnFamilyNames: Set[String]
  def prefixScanWithMultiValues(prefixKey: UnsafeRow, colFamilyName: String): StateStoreIterator[UnsafeRowPair]
  def iteratorWithMultiValues(colFamilyName: String): StateStoreIterator[UnsafeRowPair]
}
