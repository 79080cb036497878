package io.ttlstore.config

/**
 * The configuration reference, generated from [[TtlStoreConfig]] and [[SparkStateSettings]]; `make docs`
 * writes it to docs/configuration.md.
 */
object ConfigDocs {
  import TtlStoreConfig.{all, Prefix}

  /** The configuration reference, as `docs/configuration.md` holds it (a test keeps them equal). */
  def markdownReference: String = {
    val rows = all.map { k =>
      val scope = if (k.scoped) "global, operator, store" else "global"
      s"| `${k.key}` | `${k.defaultText}` | $scope | ${k.allowed} | ${k.doc} |"
    }
    (Seq(
      "# Configuration reference",
      "",
      "<!-- Generated from io.ttlstore.config.TtlStoreConfig by `make docs`; do not edit by hand. -->",
      "",
      "Set these like any Spark SQL setting: on the session builder, in spark-defaults.conf, or",
      "with `spark.conf.set` before the query starts. Spark passes them to the provider; an",
      "invalid value or an unknown key under the prefix fails the query with the key's name.",
      "",
      "Settings whose scope includes *operator* and *store* can also be set for one stateful",
      "operator, `" + Prefix + "operator.<operatorId>.<name>`, and for one store of an",
      "operator, `" + Prefix + "operator.<operatorId>.store.<storeName>.<name>`; the most",
      "specific setting wins. Operator ids are the ones Spark shows in the query's progress",
      "(`stateOperators`) and state metadata: 0, 1, ... in plan order.",
      "",
      "| key | default | scope | allowed | meaning |",
      "|---|---|---|---|---|") ++ rows ++ Seq(
      "",
      "## Spark's own state store settings",
      "",
      "<!-- Generated from io.ttlstore.config.SparkStateSettings. -->",
      "",
      "A query that moves to ttlstore keeps its Spark configuration. Each of Spark " +
        "4.3's state store settings is honoured by ttlstore, applied by Spark around every provider, always " +
        "on in ttlstore whatever its value, or about stores and files ttlstore does not have; none is " +
        "silently ignored. A test keeps this table complete against the Spark on the classpath.",
      "") ++ SparkStateSettings.markdownTable).mkString("", "\n", "\n")
  }

  def main(args: Array[String]): Unit = print(markdownReference)
}
