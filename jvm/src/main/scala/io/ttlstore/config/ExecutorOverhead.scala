package io.ttlstore.config

import java.util.Locale

import scala.util.Try

import org.apache.spark.network.util.JavaUtils

/**
 * The memory Spark gives each executor outside its heap (its memory overhead), worked out from the application's
 * Spark settings the way Spark's cluster managers work it out, and the cluster manager that runs the executors:
 * `spark.executor.memoryOverhead` when set, else the larger of `spark.executor.minMemoryOverhead` (384 MiB; a fixed
 * 384 MiB before Spark 4.0) and the overhead factor times `spark.executor.memory`. The factor is
 * `spark.executor.memoryOverheadFactor`, else on Kubernetes `spark.kubernetes.memoryOverheadFactor`, which Spark
 * sets to 0.4 for Python and R applications, else 0.1. `spark.memory.offHeap.size` and
 * `spark.executor.pyspark.memory` are added to a container beside the overhead, so they take nothing from it.
 *
 * @param manager who runs the executors, and whether a container limit enforces heap plus overhead
 * @param mib     the overhead in MiB
 * @param how     where the figure comes from, in words (for logs and errors)
 */
final case class ExecutorOverhead(manager: ClusterManager, mib: Long, how: String)

/** Who runs a Spark application's executors, from `spark.master`. */
sealed abstract class ClusterManager(val name: String, val enforcesOverhead: Boolean)

object ClusterManager {

  /** `local[...]`: the driver's JVM runs the tasks; no executor has an overhead of its own. */
  case object Local extends ClusterManager("local", enforcesOverhead = false)

  /** YARN kills a container whose memory passes the executor's heap plus its overhead. */
  case object Yarn extends ClusterManager("YARN", enforcesOverhead = true)

  /** Kubernetes sets each executor pod's memory limit to its heap plus its overhead. */
  case object Kubernetes extends ClusterManager("Kubernetes", enforcesOverhead = true)

  /** Spark's standalone master and `local-cluster`: executors are plain processes, nothing enforces a limit. */
  case object Standalone extends ClusterManager("standalone", enforcesOverhead = false)

  def of(master: String): ClusterManager = master.trim.toLowerCase(Locale.ROOT) match {
    case m if m == "local" || m.startsWith("local[") => Local
    case m if m.startsWith("yarn") => Yarn
    case m if m.startsWith("k8s://") => Kubernetes
    case _ => Standalone
  }
}

object ExecutorOverhead {

  /** Spark's floor of an executor's overhead: `spark.executor.minMemoryOverhead`'s default, fixed before 4.0. */
  val MinOverheadMiB = 384L

  /** Spark's overhead factor, and Kubernetes' for Python and R applications. */
  val Factor = 0.1
  val NonJvmKubernetesFactor = 0.4

  /** What `local[...]` has: the driver's JVM, no container. */
  val Local: ExecutorOverhead = ExecutorOverhead(ClusterManager.Local, 0L, "none: local mode runs no executors")

  /**
   * The overhead of an executor of the application whose Spark settings are `conf` (`spark.*` keys as the
   * driver's SparkConf holds them), on a Spark line with (`minOverheadSetting`) or without
   * `spark.executor.minMemoryOverhead`. Without `spark.master` it is local mode, unless asked `onExecutor`.
   */
  def of(conf: Map[String, String], minOverheadSetting: Boolean, onExecutor: Boolean = false): ExecutorOverhead = {
    val manager = ClusterManager.of(conf.getOrElse("spark.master", if (onExecutor) "executor" else "local[*]"))
    if (manager == ClusterManager.Local) Local
    else mib(conf, "spark.executor.memoryOverhead") match {
      case Some(set) => ExecutorOverhead(manager, set, s"spark.executor.memoryOverhead=$set MiB")
      case None =>
        val executor = mib(conf, "spark.executor.memory").getOrElse(1024L)
        val (factor, factorKey) = overheadFactor(conf, manager)
        val min = (if (minOverheadSetting) mib(conf, "spark.executor.minMemoryOverhead") else None)
          .getOrElse(MinOverheadMiB)
        val overhead = math.max((factor * executor).toLong, min)
        ExecutorOverhead(manager, overhead,
          s"spark.executor.memoryOverhead unset: the larger of $min MiB and $factorKey $factor times " +
            s"spark.executor.memory $executor MiB")
    }
  }

  private def overheadFactor(conf: Map[String, String], manager: ClusterManager): (Double, String) = {
    val executorKey = "spark.executor.memoryOverheadFactor"
    val k8sKey = "spark.kubernetes.memoryOverheadFactor"
    def read(key: String) = conf.get(key).flatMap(v => Try(v.trim.toDouble).toOption).map(_ -> key)
    read(executorKey)
      .orElse(if (manager == ClusterManager.Kubernetes) read(k8sKey) else None)
      .getOrElse {
        val nonJvm = manager == ClusterManager.Kubernetes &&
          conf.get("spark.kubernetes.resource.type").exists(t => t == "python" || t == "r")
        if (nonJvm) NonJvmKubernetesFactor -> s"$k8sKey (a Python or R application's)"
        else Factor -> executorKey
      }
  }

  /**
   * A size setting in MiB, read by Spark's own parser (MiB without a unit); a value Spark refuses counts as unset,
   * as Spark itself names it when it sizes the executors.
   */
  def mib(conf: Map[String, String], key: String): Option[Long] =
    conf.get(key).flatMap(raw => Try(JavaUtils.byteStringAsMb(raw)).toOption)
}
