package io.ttlstore.spark

import org.apache.spark.sql.execution.streaming.state.StateStore

/** Spark's `StateStore` (4.2 and later already has every member ttlstore's store implements). */
trait StoreAdapter extends StateStore
