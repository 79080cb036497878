package io.ttlstore

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.streaming.operators.stateful.StatefulOperator
import org.apache.spark.sql.execution.streaming.operators.stateful.join.StreamingSymmetricHashJoinExec

import io.ttlstore.config.{ConfigScope, NativeFilterMode, StoreScope, StreamStreamJoin, TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.errors.TtlStoreErrors
import io.ttlstore.store.NativeFilter

/**
 * Checks ttlstore's settings against a streaming query's plan on the driver, when a micro-batch is
 * planned and before any task runs: every value parses, operator- and store-scoped keys name
 * operators and stores the query has, no stream-stream join gets TTL unless allowed, and with
 * `nativeFilter.enabled=true` the native filter loads (in the driver's JVM; executors check again). Without
 * it the executors still refuse bad values at their first batch, but cannot know which operator
 * ids exist.
 *
 * Installed by `spark.sql.extensions=io.ttlstore.TtlStoreExtensions` (`ttlstore.configure` sets
 * it). Spark applies session columnar rules while preparing each physical plan, after the streaming
 * planner has given stateful operators their ids, which makes them the one public hook that sees a
 * streaming plan with its operator ids.
 */
object QueryStartCheck {
  private val ProviderKey = "spark.sql.streaming.stateStore.providerClass"
  private val StatePrefix = "spark.sql.streaming.stateStore."

  /** A stateful operator of the plan: its id, name and store names. */
  final case class Operator(id: Long, name: String, stores: Seq[String])

  def operators(plan: SparkPlan): Seq[Operator] =
    plan.collect {
      case j: StreamingSymmetricHashJoinExec if j.stateInfo.isDefined =>
        Operator(j.stateInfo.get.operatorId, j.nodeName, StreamStreamJoin.StoreNames)
      case s: StatefulOperator if s.stateInfo.isDefined =>
        Operator(s.stateInfo.get.operatorId, s.asInstanceOf[SparkPlan].nodeName, Seq("default"))
    }.groupBy(_.id).values.map(_.head).toSeq.sortBy(_.id)

  /** Fails with the first problem of `confs` for a query with `ops`. */
  def check(confs: Map[String, String], ops: Seq[Operator]): Unit = {
    for (op <- ops; store <- op.stores) {
      val scope = StoreScope(op.id, store)
      val settings = TtlStoreSettings.parse(confs, scope)
      val where = s"operator ${op.id} (${op.name}), store $store"
      StreamStreamJoin.checkTtl(settings, confs, scope, where)
      if (settings.nativeFilter == NativeFilterMode.On) {
        NativeFilter.wanted(settings, TtlStoreConfig.NativeFilterEnabled.key, where)
      }
    }
    ConfigScope.scopedKeys(confs).foreach { k =>
      ops.find(_.id == k.operatorId) match {
        case None => throw TtlStoreErrors.unknownOperator(k.key, k.operatorId, ops.map(o => o.id -> o.name))
        case Some(op) => k.storeName.filterNot(op.stores.contains).foreach { s =>
            throw TtlStoreErrors.unknownStore(k.key, op.id, s, op.stores)
          }
      }
    }
  }

  /** The rule: a no-op for plans without stateful operators or queries on another provider. */
  final class CheckRule(session: SparkSession) extends Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = {
      val conf = plan.conf
      if (conf.getConfString(ProviderKey, "") == classOf[TtlStateStoreProvider].getName) {
        val ops = operators(plan)
        if (ops.nonEmpty) check(conf.getAllConfs.filter(_._1.startsWith(StatePrefix)), ops)
      }
      plan
    }
  }
}
