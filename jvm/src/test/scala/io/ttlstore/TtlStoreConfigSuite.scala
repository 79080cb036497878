package io.ttlstore

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

class TtlStoreConfigSuite extends AnyFunSuite {
  import TtlStoreConfig._

  test("unset keys take their defaults") {
    assert(parse(Map.empty) == TtlStoreSettings(None, 64L, 16, 10, "lz4", 100000))
  }

  test("set keys are parsed, case-insensitively for names of things") {
    val s = parse(Map(BlockCacheSizeMb.key -> "128", SstCompression.key -> "ZSTD",
      LocalDir.key -> "/tmp/x", "spark.sql.streaming.stateStore.minDeltasForSnapshot" -> "3"))
    assert(s.blockCacheSizeMb == 128 && s.sstCompression == "zstd" && s.localDir.contains("/tmp/x"))
  }

  test("an invalid value fails naming the key, the value and what is allowed") {
    val e = intercept[TtlStoreException](parse(Map(WriteBufferSizeMb.key -> "-3")))
    assert(e.errorName == "INVALID_CONFIG")
    assert(e.getMessage.contains(WriteBufferSizeMb.key) && e.getMessage.contains("-3") &&
      e.getMessage.contains(WriteBufferSizeMb.allowed))
    assert(intercept[TtlStoreException](parse(Map(SstCompression.key -> "gzip"))).errorName ==
      "INVALID_CONFIG")
  }

  test("an unknown key under ttlstore's prefix fails and lists the known keys") {
    val e = intercept[TtlStoreException](parse(Map(Prefix + "blockCacheSizeMb" -> "1")))
    assert(e.errorName == "UNKNOWN_CONFIG" && e.getMessage.contains(BlockCacheSizeMb.key))
  }

  test("docs/configuration.md is exactly what the table generates (run `make docs`)") {
    val docs = new String(Files.readAllBytes(Paths.get("docs/configuration.md")), "UTF-8")
    assert(docs == markdownReference)
  }
}
