package io.ttlstore.spark

import java.util.Properties

import io.ttlstore.errors.{TtlStoreErrors, TtlStoreException}

/**
 * The Spark line this jar was built for, from the `io/ttlstore/build.properties` the build writes
 * into each line's jar, and the check that the Spark running it is of that line. Each line's jar is
 * compiled against that line's API, which changes between lines (methods gain parameters, classes
 * move): in a Spark of another line it would fail somewhere in a task with a `NoSuchMethodError`,
 * so the extension, the provider and the state source refuse it by name first.
 */
object BuiltFor {
  private val props: Properties = {
    val p = new Properties()
    Option(getClass.getResourceAsStream("/io/ttlstore/build.properties")).foreach { in =>
      try p.load(in)
      finally in.close()
    }
    p
  }

  private def prop(key: String): String = Option(props.getProperty(key)).getOrElse("unknown")

  /** The Spark line ("4.3") and Scala binary version ("2.13") this jar was built for. */
  val line: String = prop("spark.line")
  val scalaBinary: String = prop("scala.binary")

  /** This jar's Maven artifact, such as `ttlstore-spark-4.3_2.13`, and version. */
  val artifact: String = prop("artifact")
  val version: String = prop("version")

  /** Every line and Scala ttlstore is built for, as "4.3_2.13". */
  val builds: Seq[String] = prop("spark.builds").split(',').toSeq.map(_.trim).filter(_.nonEmpty)

  /** Every line ttlstore is built for ("4.0", ..., "4.3"). */
  def lines: Seq[String] = builds.map(_.takeWhile(_ != '_')).distinct

  /** The line of a Spark version: "4.2.1" and "4.2.1-vendor-3" are of line "4.2". */
  def lineOf(sparkVersion: String): String = sparkVersion.split("[.-]").take(2).mkString(".")

  /** The binary version of a Scala version: "2.13.16" is "2.13". */
  def scalaBinaryOf(scalaVersion: String): String = scalaVersion.split('.').take(2).mkString(".")

  /**
   * Why this jar cannot run in Spark `sparkVersion` with Scala `scalaVersion`, or None. Pure: the
   * check below passes the running Spark's versions.
   */
  def mismatch(sparkVersion: String, scalaVersion: String): Option[TtlStoreException] = {
    val runningLine = lineOf(sparkVersion)
    val runningScala = scalaBinaryOf(scalaVersion)
    if (runningLine == line && runningScala == scalaBinary) None
    else {
      val use =
        if (builds.contains(s"${runningLine}_$runningScala")) {
          Some(s"io.ttlstore:ttlstore-spark-${runningLine}_$runningScala:$version")
        } else None
      Some(TtlStoreErrors.sparkLineMismatch(s"$artifact $version", line, scalaBinary, sparkVersion, runningScala,
          use, builds.map(_.replace("_", " with Scala "))))
    }
  }

  private lazy val problem: Option[TtlStoreException] =
    mismatch(org.apache.spark.SPARK_VERSION, scala.util.Properties.versionNumberString)

  /** Fails with SPARK_LINE_MISMATCH unless the running Spark is of this jar's line and Scala. */
  def check(): Unit = problem.foreach(e => throw e)
}
