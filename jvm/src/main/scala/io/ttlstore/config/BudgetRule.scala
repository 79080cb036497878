package io.ttlstore.config

/**
 * How large an executor's shared RocksDB memory may be beside the JVM's own memory outside the heap: the rule
 * [[MemoryBudget]] applies and `maxMemoryUsageMB`'s doc states. Pure: figures in, figures out.
 */
object BudgetRule {

  /**
   * What an executor's overhead must hold beside ttlstore's native memory: the JVM's own memory outside its heap
   * (metaspace, code, threads, the collector's structures, Netty's buffers). Measured by `make soak-memory` on
   * executors of 1 GiB (the soak's): 241 MiB, and 260-268 MiB on executors of 2 GiB (docs/memory.md).
   */
  val ReserveMiB = 288L

  /**
   * ttlstore's native memory at its peak for each MiB of budget: the budget itself, and as much again beside it
   * once reads and compactions churn a full cache (glibc's arenas keep what RocksDB's threads freed; index and
   * filter blocks, table readers). Measured on `--shape cache-churn` (docs/memory.md, "A state of some hundreds of
   * MiB"): 1.9-2.3x the state memory per executor, with budgets of 48, 64 and 96 MiB.
   */
  val PeakPerBudgetMiB = 2L // maxMemoryUsageMB's doc says "half" and "twice"

  /** The budget without an overhead to fit (local mode), and the most a derived budget takes. */
  val LocalMiB = 512L

  /** The least a derived budget takes, however small the overhead. */
  val FloorMiB = 64L

  /** The largest budget whose peak fits an overhead of `overheadMiB` beside [[ReserveMiB]] (0 if none does). */
  def fitsMiB(overheadMiB: Long): Long = math.max(overheadMiB - ReserveMiB, 0L) / PeakPerBudgetMiB

  /**
   * The budget when `maxMemoryUsageMB` is unset: on executors, the largest that fits the overhead ([[fitsMiB]]), at
   * least [[FloorMiB]] and at most [[LocalMiB]]; in local mode, [[LocalMiB]].
   */
  def derivedMiB(overhead: ExecutorOverhead): Long =
    if (overhead.manager == ClusterManager.Local) LocalMiB
    else math.min(LocalMiB, math.max(FloorMiB, fitsMiB(overhead.mib)))

  /** The overhead in MiB that a budget of `budgetMiB` needs. */
  def overheadNeededMiB(budgetMiB: Long): Long = ReserveMiB + PeakPerBudgetMiB * budgetMiB
}
