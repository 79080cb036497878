package io.ttlstore.readahead

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.SparkPlan

import io.ttlstore.config.{ConfigKey, TtlStoreConfig}
import io.ttlstore.spark.PythonOperators.FlatMapGroupsInPandasWithStateExec
import io.ttlstore.spark.SparkClasses.{BaseStreamingDeduplicateExec, FlatMapGroupsWithStateExec, StateStoreRestoreExec, StatefulOperatorStateInfo}

/**
 * Places a [[ReadAheadExec]] under each stateful operator whose state reads it serves, in a plan that runs on
 * `provider` (ttlstore's class name) with `readAhead.rows` above 0: a streaming deduplication (also within a
 * watermark), an aggregation's restore, `flatMapGroupsWithState` and `applyInPandasWithState`. Each reads its store
 * one key at a time, the key projected from its input's rows by the attributes named here (read in each line's
 * jars: `keyExpressions`, `groupingAttributes`). Other operators (session windows, which scan a key's sessions;
 * stream-stream joins, with four stores each) run as before.
 */
final class ReadAheadRule(provider: String) extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = {
    val conf = plan.conf
    lazy val confs = conf.getAllConfs.filter(_._1.startsWith(ConfigKey.SparkStatePrefix))
    if (conf.getConfString(ConfigKey.SparkProviderKey, "") != provider) plan
    else {
      val rows = TtlStoreConfig.ReadAheadRows.readFrom(confs)
      val maxBytes = TtlStoreConfig.ReadAheadMaxMb.readFrom(confs).toLong << 20
      if (rows == 0) plan
      else plan.transformUp {
        case op if !op.children.headOption.exists(_.isInstanceOf[ReadAheadExec]) =>
          ReadAheadRule.served(op) match {
            case Some((keys, info)) =>
              val ahead = ReadAheadExec(keys, info.checkpointLocation, info.operatorId, rows, maxBytes,
                op.children.head)
              op.withNewChildren(ahead +: op.children.tail)
            case None => op
          }
      }
    }
  }
}

object ReadAheadRule {

  /** The state keys and state of an operator the read-ahead serves; None for any other node. */
  def served(op: SparkPlan): Option[(Seq[Attribute], StatefulOperatorStateInfo)] = op match {
    case r: StateStoreRestoreExec => r.stateInfo.map(r.keyExpressions.toSeq -> _)
    case d: BaseStreamingDeduplicateExec => d.stateInfo.map(d.keyExpressions.toSeq -> _)
    case f: FlatMapGroupsWithStateExec => f.stateInfo.map(f.groupingAttributes.toSeq -> _)
    case p: FlatMapGroupsInPandasWithStateExec => p.stateInfo.map(p.groupingAttributes.toSeq -> _)
    case _ => None
  }
}
