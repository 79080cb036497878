package io.ttlstore

import java.nio.file.{Files, Paths}

import scala.io.Source

import org.apache.spark.SparkThrowable
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.errors.{ErrorConditions, TtlStoreErrors}

class ErrorConditionsSuite extends AnyFunSuite {

  /**
   * Every name ttlstore's sources raise an error under: written in the call, or the `ErrorName` of the
   * object that both raises its error and recognises it again (`DiskFull`, `FileSystemFailure`).
   */
  private val raised: Set[String] = {
    val sources = Seq("jvm/src/main/scala/io/ttlstore/errors", "jvm/src/main/java/io/ttlstore/spark")
    val call = """(?:(?:error|errorWithCause|TtlStoreException)\(\s*|val ErrorName = )"([A-Z][A-Z0-9_]*)"""".r
    sources.flatMap { dir =>
      Files.list(Paths.get(dir)).toArray.toSeq.map(p =>
        new String(Files.readAllBytes(p.asInstanceOf[java.nio.file.Path])))
    }.flatMap(text => call.findAllMatchIn(text).map(_.group(1))).toSet
  }

  test("every error ttlstore raises has a SQLSTATE, and every condition in the table is raised") {
    assert(raised.size > 50)
    assert(raised -- ErrorConditions.sqlStates.keySet == Set.empty)
    assert(ErrorConditions.sqlStates.keySet -- raised == Set.empty)
    assert(ErrorConditions.sqlStates.values.forall(_.matches("[0-9A-Z]{5}")))
  }

  test("no condition of ttlstore's is one of Spark's own") {
    val registry = Source.fromInputStream(getClass.getResourceAsStream("/error/error-conditions.json")).mkString
    val spark = """(?m)^  "([A-Z][A-Z0-9_]*)" :""".r.findAllMatchIn(registry).map(_.group(1)).toSet
    assert(spark.size > 500)
    assert(ErrorConditions.sqlStates.keySet.intersect(spark) == Set.empty)
  }

  test("an error of ttlstore's is a SparkThrowable with its condition, SQLSTATE and parameters") {
    val e = TtlStoreErrors.invalidConfig("spark.sql.streaming.stateStore.ttlstore.ttl", "soon", "a duration")
    assert(e.isInstanceOf[SparkThrowable])
    assert(e.getCondition == "INVALID_CONFIG" && e.getErrorClass == "INVALID_CONFIG")
    assert(e.getSqlState == "22022" && !e.isInternalError)
    assert(e.getMessageParameters.get("key") == "spark.sql.streaming.stateStore.ttlstore.ttl")
  }
}
