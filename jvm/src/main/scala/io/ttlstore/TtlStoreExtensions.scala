package io.ttlstore

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan}

import io.ttlstore.readahead.ReadAheadRule
import io.ttlstore.spark.BuiltFor

/**
 * `spark.sql.extensions=io.ttlstore.TtlStoreExtensions`: refuses a Spark of another line than this
 * jar's when the session starts ([[BuiltFor]]), and installs [[QueryStartCheck]] and then, in a plan on ttlstore,
 * the read-ahead under the stateful operators it serves ([[ReadAheadRule]]).
 */
class TtlStoreExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    BuiltFor.check()
    extensions.injectColumnar { session =>
      new ColumnarRule {
        override def preColumnarTransitions: Rule[SparkPlan] = new Rule[SparkPlan] {
          private val (check, readAhead) =
            (new QueryStartCheck.CheckRule(session), new ReadAheadRule(classOf[TtlStateStoreProvider].getName))
          override def apply(plan: SparkPlan): SparkPlan = readAhead(check(plan))
        }
      }
    }
  }
}
