package io.ttlstore

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan}

/** `spark.sql.extensions=io.ttlstore.TtlStoreExtensions`: installs [[QueryStartCheck]]. */
class TtlStoreExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    extensions.injectColumnar { session =>
      new ColumnarRule {
        override def preColumnarTransitions: Rule[SparkPlan] = new QueryStartCheck.CheckRule(session)
      }
    }
}
