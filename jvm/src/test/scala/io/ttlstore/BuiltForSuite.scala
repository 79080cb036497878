package io.ttlstore

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.spark.BuiltFor

class BuiltForSuite extends AnyFunSuite {

  test("the jar knows the line, Scala and artifact it was built for") {
    assert(BuiltFor.line == BuiltFor.lineOf(org.apache.spark.SPARK_VERSION))
    assert(BuiltFor.scalaBinary == "2.13")
    assert(BuiltFor.artifact == s"ttlstore-spark-${BuiltFor.line}_2.13")
    assert(BuiltFor.lines.contains(BuiltFor.line) && BuiltFor.lines.size >= 5)
    assert(BuiltFor.builds.asScala.head == "3.5_2.12", "Spark 3.5's jar is built for the Scala its pyspark ships")
  }

  test("a Spark version's line is its major and minor number, whatever follows") {
    assert(BuiltFor.lineOf("4.2.1") == "4.2")
    assert(BuiltFor.lineOf("4.0.0-preview2") == "4.0")
    assert(BuiltFor.lineOf("3.5.1-amzn-0") == "3.5")
    assert(BuiltFor.scalaBinaryOf("2.13.16") == "2.13")
  }

  test("the running Spark of this jar's line passes, any patch release of it") {
    BuiltFor.check()
    assert(BuiltFor.mismatch(s"${BuiltFor.line}.0", "2.13.12").isEmpty)
    assert(BuiltFor.mismatch(s"${BuiltFor.line}.99-vendor", "2.13.18").isEmpty)
  }

  test("another supported line is refused naming both versions and the artifact to use") {
    val other = BuiltFor.lines.asScala.find(l => l != BuiltFor.line && BuiltFor.builds.contains(s"${l}_2.13")).get
    val e = BuiltFor.mismatch(s"$other.1", "2.13.16").get
    assert(e.errorName == "SPARK_LINE_MISMATCH")
    assert(e.getMessage.contains(s"built for Spark ${BuiltFor.line} with Scala 2.13, but runs in Spark $other.1"))
    assert(e.getMessage.contains(s"io.ttlstore:ttlstore-spark-${other}_2.13:${BuiltFor.version}"))
  }

  test("another Scala, or a line ttlstore is not built for, is refused naming the lines it is built for") {
    val scala = BuiltFor.mismatch(s"${BuiltFor.line}.0", "2.12.18").get
    assert(scala.getMessage.contains("with Scala 2.12"))
    val unknown = BuiltFor.mismatch("3.3.4", "2.12.15").get
    assert(unknown.getMessage.contains(
        "ttlstore is built for Spark 3.5 with Scala 2.12, 3.5 with Scala 2.13, 4.0 with Scala 2.13, "))
    assert(!scala.getMessage.contains("_2.12:"), "no artifact is suggested that was never built")
    for (scala <- Seq("2.12", "2.13")) {
      val spark35 = BuiltFor.mismatch("3.5.2", s"$scala.8").get
      assert(spark35.getMessage.contains(s"io.ttlstore:ttlstore-spark-3.5_$scala:${BuiltFor.version}"))
    }
  }
}
