// ttlstore: the JVM side (provider, native filter loader) lives in jvm/.
//
// Spark 4.3.0 is not published on Maven Central as this is written, but the pyspark 4.3.0 wheel on
// PyPI carries exactly its jars. We compile and test against those jars (the same ones the Python
// tests run on), so they are a "provided" dependency in effect: never packaged into our jar.

val versionPattern = """__version__\s*=\s*"([^"]+)"""".r

lazy val sparkJarsDir = settingKey[File]("the jars/ folder of the installed pyspark 4.3.0")

lazy val jvm = (project in file("jvm"))
  .settings(
    name := "ttlstore",
    organization := "io.ttlstore",
    version := versionPattern
      .findFirstMatchIn(IO.read(file("python/ttlstore/_version.py")))
      .map(_.group(1))
      .getOrElse(sys.error("python/ttlstore/_version.py has no __version__")),
    scalaVersion := "2.13.18",
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint:-byname-implicit,_",
      "-Wconf:cat=lint-infer-any:s"),
    javacOptions ++= Seq("--release", "17"),
    sparkJarsDir := {
      val fromEnv = sys.env.get("SPARK_JARS_DIR").map(file)
      val fromVenv = (file(".venv/lib") * "python3*" / "site-packages" / "pyspark" / "jars").get
      fromEnv.orElse(fromVenv.headOption).getOrElse(sys.error(
        "Spark's jars were not found: run `make` (it installs pyspark 4.3.0 into .venv) " +
          "or set SPARK_JARS_DIR to the jars/ folder of a Spark 4.3.0 distribution."))
    },
    Compile / unmanagedJars ++= (sparkJarsDir.value * "*.jar").classpath,
    // The native TTL filter, built by `make native` for the platform the build runs on.
    Compile / unmanagedResourceDirectories += (ThisBuild / baseDirectory).value / "jvm" / "target" / "native-resources",
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    // Spark's own scala-library comes with its jars; do not package Scala into ours either.
    autoScalaLibrary := true,
    Compile / packageBin / packageOptions += Package.ManifestAttributes(
      "Implementation-Title" -> "ttlstore",
      "Implementation-Version" -> version.value),
    Compile / packageBin / artifactPath :=
      (Compile / target).value / s"ttlstore-${version.value}.jar",
    Test / fork := true,
    Test / parallelExecution := false,
    Test / baseDirectory := (ThisBuild / baseDirectory).value,
    Test / javaOptions ++= Seq(
      "-Xmx3g",
      "-Dlog4j2.configurationFile=conf/log4j2.properties",
      "-Dspark.ui.enabled=false",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
  )

lazy val root = (project in file("."))
  .aggregate(jvm)
  .settings(publish / skip := true)
