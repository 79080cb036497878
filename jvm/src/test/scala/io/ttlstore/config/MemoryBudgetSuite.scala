package io.ttlstore.config

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.errors.TtlStoreException

class MemoryBudgetSuite extends AnyFunSuite {
  import TtlStoreConfig.MaxMemoryUsageMb

  private def overhead(conf: (String, String)*): ExecutorOverhead =
    ExecutorOverhead.of(conf.toMap, minOverheadSetting = true)

  private def budgetMiB(confs: Map[String, String], on: ExecutorOverhead): Long =
    MemoryBudget.parse(confs, on).cacheBytes >> 20

  private val yarn2g = overhead("spark.master" -> "yarn", "spark.executor.memory" -> "2g")

  test("an executor's overhead is Spark's: the larger of 384 MiB and a tenth of its memory, unless set") {
    assert(yarn2g == ExecutorOverhead(ClusterManager.Yarn, 384L, yarn2g.how))
    assert(overhead("spark.master" -> "yarn", "spark.executor.memory" -> "8g").mib == 819L)
    assert(overhead("spark.master" -> "spark://h:7077", "spark.executor.memoryOverhead" -> "1g").mib == 1024L)
    assert(overhead("spark.master" -> "yarn", "spark.executor.memory" -> "8g",
      "spark.executor.memoryOverheadFactor" -> "0.25").mib == 2048L)
  }

  test("Kubernetes gives Python applications 0.4 of the memory, and its own factor when set") {
    val python = overhead("spark.master" -> "k8s://https://api:443", "spark.executor.memory" -> "4g",
      "spark.kubernetes.resource.type" -> "python")
    assert(python.manager == ClusterManager.Kubernetes && python.mib == 1638L && python.how.contains("Python"))
    assert(overhead("spark.master" -> "k8s://https://api:443", "spark.executor.memory" -> "4g",
      "spark.kubernetes.memoryOverheadFactor" -> "0.2").mib == 819L)
  }

  test("spark.executor.minMemoryOverhead counts only on lines that have it") {
    val conf = Map("spark.master" -> "yarn", "spark.executor.minMemoryOverhead" -> "1g")
    assert(ExecutorOverhead.of(conf, minOverheadSetting = true).mib == 1024L)
    assert(ExecutorOverhead.of(conf, minOverheadSetting = false).mib == 384L)
  }

  test("sizes read as Spark reads them: MiB without a unit, a value Spark refuses as unset") {
    def read(raw: String) = ExecutorOverhead.mib(Map("spark.executor.memory" -> raw), "spark.executor.memory")
    assert(Seq("512", "512m", "1g", "1024k", " 2G ").map(read) ==
      Seq(Some(512L), Some(512L), Some(1024L), Some(1L), Some(2048L)))
    assert(Seq("1.5g", "lots", "12x").flatMap(read).isEmpty)
  }

  test("in local mode the budget is 512 MiB, as before executors had an overhead to fit") {
    val local = overhead("spark.master" -> "local[4]", "spark.executor.memory" -> "1g")
    assert(local == ExecutorOverhead.Local)
    assert(budgetMiB(Map.empty, local) == 512L)
  }

  test("on executors an unset budget is half of what the overhead leaves after the JVM's share") {
    assert(budgetMiB(Map.empty, yarn2g) == 64L)
    val derived = MemoryBudget.parse(Map.empty, yarn2g)
    assert(derived.origin.contains("384 MiB") && derived.origin.contains("spark.executor.memory 2048 MiB"))
    val local2 = overhead("spark.master" -> "local-cluster[2,1,2048]", "spark.executor.memory" -> "2g")
    assert(budgetMiB(Map.empty, local2) == 64L)
    def at(overheadMiB: Long) = budgetMiB(Map.empty, ExecutorOverhead(ClusterManager.Yarn, overheadMiB, "set"))
    assert(Seq(100L, 384L, 480L, 640L, 819L, 1024L, 1312L, 4096L).map(at) ==
      Seq(64L, 64L, 96L, 176L, 265L, 368L, 512L, 512L))
  }

  test("an explicit budget that YARN or Kubernetes cannot hold is refused with the overhead it needs") {
    val e = intercept[TtlStoreException](MemoryBudget.parse(Map(MaxMemoryUsageMb.key -> "96"), yarn2g))
    assert(e.errorName == "BUDGET_EXCEEDS_OVERHEAD")
    Seq(MaxMemoryUsageMb.key, "384 MiB", "YARN", "spark.executor.memoryOverhead to at least 480 MiB",
      "at most 48", "derive 64 MiB").foreach(part => assert(e.getMessage.contains(part), part))
    assert(budgetMiB(Map(MaxMemoryUsageMb.key -> "48"), yarn2g) == 48L)
    val eightGiB = overhead("spark.master" -> "yarn", "spark.executor.memory" -> "8g")
    assert(budgetMiB(Map(MaxMemoryUsageMb.key -> "265"), eightGiB) == 265L)
    intercept[TtlStoreException](MemoryBudget.parse(Map(MaxMemoryUsageMb.key -> "266"), eightGiB))
  }

  test("where nothing enforces the overhead an explicit budget stands as set") {
    val standalone = overhead("spark.master" -> "local-cluster[2,1,2048]", "spark.executor.memory" -> "2g")
    assert(budgetMiB(Map(MaxMemoryUsageMb.key -> "512"), standalone) == 512L)
    assert(budgetMiB(Map(MaxMemoryUsageMb.key -> "4096"), ExecutorOverhead.Local) == 4096L)
  }
}
