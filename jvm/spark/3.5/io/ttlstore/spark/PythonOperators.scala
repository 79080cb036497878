package io.ttlstore.spark

import org.apache.spark.sql.execution.python

/** Where Spark 3.5 keeps the Python stateful operator ttlstore names: `sql.execution.python`. */
object PythonOperators {
  type FlatMapGroupsInPandasWithStateExec = python.FlatMapGroupsInPandasWithStateExec
}
