package io.ttlstore

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.SparkPlan

import io.ttlstore.config.{ConfigKey, ConfigScope, ExecutorOverhead, NativeMode, StoreScope, StreamStreamJoin, TtlStoreConfig, TtlStoreSettings}
import io.ttlstore.errors.{LineErrors, RepartitionErrors, TtlStoreErrors}
import io.ttlstore.repartition.RepartitionPlan
import io.ttlstore.spark.{LineCapabilities, RealTimeMode}
import io.ttlstore.spark.SparkClasses.{StatefulOperator, StreamingSymmetricHashJoinExec}
import io.ttlstore.store.nativelib.NativeFilter

/**
 * Checks ttlstore's settings against a streaming query's plan on the driver, when a micro-batch is
 * planned and before any task runs: the query is not in Real-Time Mode (Spark 4.3 allows it only
 * on its own RocksDB provider, see [[TtlStoreErrors.realTimeModeNotServed]]), every value parses,
 * operator- and store-scoped keys name operators and stores the query has, on Spark 4.0 no global
 * limit runs in checkpoint format v2 (`LineCapabilities.globalLimitFailsInFormatV2`), no stream-stream join gets TTL
 * unless allowed, on Spark before 4.2 the checkpoint does not end in an unfinished `ttlstore
 * repartition`, and with
 * `nativeFilter.enabled=true` the native filter loads (in the driver's JVM; executors check again). Without
 * it the executors still refuse bad values at their first batch, but cannot know which operator
 * ids exist.
 *
 * Installed by `spark.sql.extensions=io.ttlstore.TtlStoreExtensions` (`ttlstore.configure` sets
 * it). Spark applies session columnar rules while preparing each physical plan, after the streaming
 * planner has given stateful operators their ids, which makes them the one public hook that sees a
 * streaming plan with its operator ids.
 */
object QueryStartCheck extends Logging {

  private val Ours = classOf[TtlStateStoreProvider].getName

  /** A stateful operator of the plan: its id, name, store names and state directory. */
  final case class Operator(id: Long, name: String, stores: Seq[String], stateDir: String = "", runId: String = "")

  def operators(plan: SparkPlan): Seq[Operator] =
    plan.collect {
      case j: StreamingSymmetricHashJoinExec if j.stateInfo.isDefined =>
        Operator(j.stateInfo.get.operatorId, j.nodeName, StreamStreamJoin.StoreNames,
          j.stateInfo.get.checkpointLocation, j.stateInfo.get.queryRunId.toString)
      case s: StatefulOperator if s.stateInfo.isDefined =>
        Operator(s.stateInfo.get.operatorId, s.asInstanceOf[SparkPlan].nodeName, Seq("default"),
          s.stateInfo.get.checkpointLocation, s.stateInfo.get.queryRunId.toString)
    }.groupBy(_.id).values.map(_.head).toSeq.sortBy(_.id)

  /**
   * For a query whose plan runs on `pinned`, a provider other than ttlstore: fails if the session asked for ttlstore
   * (its providerClass names it) while `earlierRun`, an earlier run of the checkpoint committed a batch on `pinned`:
   * Spark's offset log then overrides the session's provider with only a warning, and the query would run without
   * TTL. A query the user started on another provider on purpose runs as Spark runs it, whatever ttlstore settings
   * the session holds.
   */
  def checkPinned(pinned: String, sessionProvider: Option[String], earlierRun: Boolean, stateDir: String): Unit =
    if (earlierRun && sessionProvider.contains(Ours)) {
      throw TtlStoreErrors.checkpointPinsAnotherProvider(checkpointOf(stateDir), pinned, ConfigKey.SparkProviderKey)
    }

  /**
   * Whether a batch of the query whose state lives in `stateDir` was committed before (by an earlier run). A
   * listing that fails is logged and taken as no: the query runs as Spark runs it, not failed by ttlstore's check.
   */
  private def committedBefore(session: SparkSession, stateDir: String): Boolean = {
    val commits = new Path(checkpointOf(stateDir), "commits")
    try {
      val fs = commits.getFileSystem(session.sessionState.newHadoopConf())
      fs.exists(commits) && fs.listStatus(commits).exists(_.getPath.getName.forall(_.isDigit))
    } catch {
      case NonFatal(e) =>
        logWarning(s"Could not list $commits to check the provider its checkpoint pins", e)
        false
    }
  }

  /** The query's checkpoint: the parent of its state directory. */
  private def checkpointOf(stateDir: String): String =
    Option(new Path(stateDir).getParent).map(_.toString).getOrElse(stateDir)

  /** Fails with the first problem of `confs` for a query with `ops` on executors with `overhead`. */
  def check(
      confs: Map[String, String], ops: Seq[Operator], overhead: ExecutorOverhead = ExecutorOverhead.Local): Unit = {
    for (op <- ops; store <- op.stores) {
      val scope = StoreScope(op.id, store)
      val settings = TtlStoreSettings.parse(confs, scope, overhead)
      val where = s"operator ${op.id} (${op.name}), store $store"
      StreamStreamJoin.checkTtl(settings, confs, scope, where)
      if (settings.nativeFilter == NativeMode.On) {
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

  /** The query runs on another provider already checked against the session's ask (once per run, at its start). */
  private val pinChecked = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /** The query runs already checked for an unfinished repartition (the check reads the logs once per run). */
  private val runsChecked = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /**
   * On a Spark line that does not look itself (`LineCapabilities.checksUnfinishedRepartition`): fails
   * the first batch of a run whose checkpoint ends in a repartition that did not finish, before any task runs.
   */
  private def checkNoUnfinishedRepartition(session: SparkSession, op: Operator): Unit =
    if (!LineCapabilities.checksUnfinishedRepartition && op.stateDir.nonEmpty && !runsChecked.contains(op.runId)) {
      // Spark 4.0 and 4.1 also plan with a state location that names no checkpoint: nothing to read there.
      val checkpoint = checkpointOf(op.stateDir)
      if (checkpoint.nonEmpty && runsChecked.add(op.runId)) {
        RepartitionPlan.unfinished(checkpoint, session.sessionState.newHadoopConf()).foreach { case (batch, n) =>
          throw RepartitionErrors.repartitionUnfinishedAtStart(checkpoint, batch, n, session.version)
        }
      }
    }

  /**
   * The rule: a no-op for plans without stateful operators. The provider in the plan's conf is the
   * one the checkpoint pins (Spark copies it from the offset log); the user's session is the
   * application's default session, whose own conf still says what the user asked for.
   */
  final class CheckRule(session: SparkSession) extends Rule[SparkPlan] {
    override def apply(plan: SparkPlan): SparkPlan = {
      val ops = operators(plan)
      if (ops.nonEmpty) {
        val conf = plan.conf
        val confs = conf.getAllConfs.filter(_._1.startsWith(ConfigKey.SparkStatePrefix))
        val pinned = conf.getConfString(ConfigKey.SparkProviderKey, "")
        if (pinned == Ours) {
          if (RealTimeMode.runs(plan)) {
            throw TtlStoreErrors.realTimeModeNotServed(checkpointOf(ops.head.stateDir))
          }
          if (LineCapabilities.globalLimitFailsInFormatV2 && ops.exists(_.name == "StreamingGlobalLimit") &&
            conf.getConfString(ConfigKey.SparkCheckpointFormatKey, "1") == "2") {
            throw LineErrors.globalLimitInFormatV2(checkpointOf(ops.head.stateDir), session.version)
          }
          if (!LineCapabilities.checkpointFormatV2 && conf.getConfString(ConfigKey.SparkCheckpointFormatKey,
              "1") == "2") {
            throw LineErrors.checkpointFormatV2NotInSpark(ConfigKey.SparkCheckpointFormatKey, session.version)
          }
          check(confs, ops,
            ExecutorOverhead.of(session.sparkContext.getConf.getAll.toMap,
              LineCapabilities.minMemoryOverhead))
          checkNoUnfinishedRepartition(session, ops.head)
        } else if (checkpointOf(ops.head.stateDir).nonEmpty && pinChecked.add(ops.head.runId)) {
          // Once per run, at its first batch: what the session asks later is for the queries it starts later.
          // (Spark 4.0 and 4.1 also plan with a state location that names no checkpoint: no run is checked there.)
          val asked = SparkSession.getDefaultSession.flatMap(_.conf.getOption(ConfigKey.SparkProviderKey))
          if (asked.contains(Ours)) checkPinned(pinned, asked, committedBefore(session, ops.head.stateDir),
            ops.head.stateDir)
        }
      }
      plan
    }
  }
}
