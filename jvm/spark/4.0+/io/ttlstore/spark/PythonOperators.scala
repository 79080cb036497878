package io.ttlstore.spark

import org.apache.spark.sql.execution.python.streaming

/** Where Spark 4.0 and later keep the Python stateful operator ttlstore names: `sql.execution.python.streaming`. */
object PythonOperators {
  type FlatMapGroupsInPandasWithStateExec = streaming.FlatMapGroupsInPandasWithStateExec
}
