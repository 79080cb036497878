// ttlstore: the JVM side (provider, native filter loader) lives in jvm/.
//
// Spark 4.3.0 is not published on Maven Central as this is written, but the pyspark 4.3.0 wheel on
// PyPI carries exactly its jars. We compile and test against those jars (the same ones the Python
// tests run on), so they are a "provided" dependency in effect: never packaged into our jar.

val versionPattern = """__version__\s*=\s*"([^"]+)"""".r

lazy val sparkJarsDir = settingKey[File]("the jars/ folder of the installed pyspark 4.3.0")

/** `linux-x86_64`, `linux-aarch64`, ...: as io.ttlstore.store.NativeFilter.platform computes it. */
def nativePlatform: String = {
  val os = sys.props("os.name").toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z]", "")
  val arch = sys.props("os.arch").toLowerCase(java.util.Locale.ROOT) match {
    case "amd64" | "x86_64" => "x86_64"
    case "arm64" | "aarch64" => "aarch64"
    case other => other
  }
  s"$os-$arch"
}

/**
 * Builds libttlstore_filter.so from jvm/src/main/c with the C compiler ($CC, else cc) and the JNI
 * headers of the JDK that runs sbt; rebuilt only when a source changes.
 */
lazy val nativeFilter = Def.task {
  val src = (ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "c"
  val out = (Compile / resourceManaged).value / "io" / "ttlstore" / "native" / nativePlatform / "libttlstore_filter.so"
  val jdk = file(sys.props("java.home"))
  val os = sys.props("os.name").toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z]", "")
  val log = streams.value.log
  val build = FileFunction.cached(streams.value.cacheDirectory / "native-filter", FilesInfo.hash) { _ =>
    IO.createDirectory(out.getParentFile)
    val cmd = Seq(sys.env.getOrElse("CC", "cc"), "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC",
      "-shared", s"-I$jdk/include", s"-I$jdk/include/$os", "-o", out.getPath,
      (src / "ttl_expiry.c").getPath, (src / "ttl_filter_jni.c").getPath, "-ldl")
    log.info(cmd.mkString("building the native filter: ", " ", ""))
    if (scala.sys.process.Process(cmd).! != 0) {
      sys.error("Building the native TTL filter failed (see the compiler's output above); it needs a C " +
        "compiler (cc, or $CC) and a JDK with JNI headers.")
    }
    Set(out)
  }
  build(Set(src / "ttl_expiry.c", src / "ttl_expiry.h", src / "ttl_filter_jni.c")).toSeq
}

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
    // The native TTL filter, built with the C compiler for the platform the build runs on and packed
    // into the jar under io/ttlstore/native/<os>-<arch>/ (NativeFilter.platform names the same folder).
    Compile / resourceGenerators += nativeFilter.taskValue,
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    // scala-library is a compile dependency only: `package` writes a plain jar of our classes, and
    // Spark brings its own Scala at run time.
    Compile / packageBin / packageOptions += Package.ManifestAttributes(
      "Implementation-Title" -> "ttlstore",
      "Implementation-Version" -> version.value),
    Compile / packageBin / artifactPath :=
      (Compile / target).value / s"ttlstore-${version.value}.jar",
    // The Apache License 2.0, as in the repository's root and the wheel.
    Compile / packageBin / mappings += (ThisBuild / baseDirectory).value / "LICENSE" -> "META-INF/LICENSE",
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
