// ttlstore: the JVM side (provider, native filter loader) lives in jvm/.
//
// One artifact per Spark line (jvm/spark/lines.tsv), each compiled from the shared sources in
// jvm/src/main plus the adapters of its line: the directories of jvm/spark/ whose name covers the
// line ("4.0", "4.1+", "4.0-4.2"). Each line compiles against the jars of its pyspark release
// (`make spark-jars` unpacks them into .build/spark-<line>/jars), the same ones its tests run on,
// so Spark is a "provided" dependency in effect: never packaged into our jars.

val versionPattern = """__version__\s*=\s*"([^"]+)"""".r

/** python/pyproject.toml, whose [project.urls] is the one source of the project's addresses. */
lazy val pyproject = IO.read(file("python/pyproject.toml"))
def projectUrl(key: String): String =
  s"""(?m)^$key\\s*=\\s*"([^"]+)"""".r
    .findFirstMatchIn(pyproject)
    .map(_.group(1))
    .getOrElse(sys.error(s"python/pyproject.toml's [project.urls] has no $key"))

lazy val sparkJarsDir = settingKey[File]("the folder of the Spark jars this line compiles against")
lazy val sparkLine = settingKey[SparkLine]("the Spark line this project builds for")
lazy val testkitJar = taskKey[File]("the test module's jar: what ttlstore's own tests hand the stores of a query")

/**
 * The test module (jvm/src/testkit): compiled with each line's classes, so that ScalaTest finds it, but
 * kept out of the jar that ships and packed into a jar of its own, jvm/target/jars/ttlstore-testkit-*.jar,
 * that only ttlstore's tests put on a session's class path.
 */
def inTestkit(path: String): Boolean =
  path.startsWith("io/ttlstore/testkit") || path == "META-INF/services/io.ttlstore.config.TestHookSource"

/** The Spark lines of jvm/spark/lines.tsv (project/SparkLines.scala reads it). */
lazy val sparkLines: Seq[SparkLine] = SparkLines.read(file("jvm/spark/lines.tsv"))

/** The line the ScalaTest suites, the benchmarks and the docs generator run on. */
lazy val devLine: SparkLine = sparkLines.last

/**
 * What the jar says about itself: io/ttlstore/build.properties, read by io.ttlstore.spark.BuiltFor
 * to refuse a Spark of another line by name.
 */
lazy val buildProperties = Def.task {
  val l = sparkLine.value
  val out = (Compile / resourceManaged).value / "io" / "ttlstore" / "build.properties"
  val text = Seq(
    s"spark.line=${l.line}",
    s"spark.builds=${sparkLines.map(o => s"${o.line}_${o.scalaBinary}").mkString(",")}",
    s"spark.compiledAgainst=${l.latest}",
    s"scala.binary=${l.scalaBinary}",
    s"artifact=${l.name}_${l.scalaBinary}",
    s"native.platforms=${NativeLibraries.targets.map(_._1).mkString(",")}",
    s"version=${version.value}").mkString("", "\n", "\n")
  // Written only when it changes: a new file would make `package` write the jar (and publish it) again.
  if (!out.isFile || IO.read(out) != text) IO.write(out, text)
  Seq(out)
}

/** io.ttlstore.spark.LineCapabilities of the line, from jvm/spark/<line>.capabilities (project/SparkLines.scala). */
lazy val lineCapabilities = Def.task {
  val l = sparkLine.value
  val source = (ThisBuild / baseDirectory).value / "jvm" / "spark" / s"${l.line}.capabilities"
  if (!source.isFile) sys.error(s"Spark ${l.line} has no $source: write its capabilities there")
  val out = (Compile / sourceManaged).value / "io" / "ttlstore" / "spark" / "LineCapabilities.scala"
  val text = Capabilities.scalaSource(l.line, source)
  if (!out.isFile || IO.read(out) != text) IO.write(out, text)
  Seq(out)
}

def lineProject(l: SparkLine): Project = Project(l.id, file("jvm"))
  .settings(
    sparkLine := l,
    name := l.name,
    // sbt would normalize the dots away (ttlstore-spark-4-3); the artifact keeps them, as Iceberg's do.
    moduleName := l.name,
    organization := "io.ttlstore",
    version := versionPattern
      .findFirstMatchIn(IO.read(file("python/ttlstore/_version.py")))
      .map(_.group(1))
      .getOrElse(sys.error("python/ttlstore/_version.py has no __version__")),
    // The Scala this line's Spark ships: Scala 2.13 is backward but not forward binary compatible.
    scalaVersion := l.scala,
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked") ++ (l.scalaBinary match {
      case "2.12" => Seq("-Xlint:_", "-Wconf:cat=lint-infer-any:s")
      case _ => Seq("-Xlint:-byname-implicit,_", "-Wconf:cat=lint-infer-any:s")
    }),
    javacOptions ++= Seq("--release", "17"),
    // Every line's classes, jars and caches apart (the projects share jvm/ as their base).
    target := (ThisBuild / baseDirectory).value / "jvm" / "target" / s"spark-${l.key}",
    // The shared sources (in Java, the few classes that must load on any Spark and Scala: the line
    // check, its exception, the registered data source), the few that differ by Scala version
    // (jvm/scala-2.12, jvm/scala-2.13: the names 2.12 lacks), and the adapters of this line.
    Compile / unmanagedSourceDirectories := Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "scala",
      (ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "java",
      (ThisBuild / baseDirectory).value / "jvm" / s"scala-${l.scalaBinary}",
      (ThisBuild / baseDirectory).value / "jvm" / "src" / "testkit" / "scala") ++
      SparkLines.adapterDirs((ThisBuild / baseDirectory).value / "jvm" / "spark", l.line),
    Compile / unmanagedResourceDirectories := Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "resources",
      (ThisBuild / baseDirectory).value / "jvm" / "src" / "testkit" / "resources"),
    Compile / packageBin / mappings ~= (_.filterNot { case (_, path) => inTestkit(path) }),
    Compile / packageSrc / mappings ~= (_.filterNot { case (_, path) => inTestkit(path) }),
    Compile / packageDoc / mappings ~= (_.filterNot { case (_, path) => inTestkit(path) }),
    testkitJar := {
      val classes = (Compile / classDirectory).value
      (Compile / compile).value
      (Compile / copyResources).value
      val files = (classes ** "*").get.filter(_.isFile).flatMap(f => IO.relativize(classes, f).map(f -> _))
      val out = (ThisBuild / baseDirectory).value / "jvm" / "target" / "jars" /
        s"ttlstore-testkit-${l.line}_${l.scalaBinary}-${version.value}.jar"
      IO.jar(files.filter { case (_, path) => inTestkit(path) }, out, new java.util.jar.Manifest, None)
      out
    },
    Compile / packageBin := (Compile / packageBin).dependsOn(testkitJar).value,
    // ScalaTest runs on the development line; the other lines are tested end to end (tests/lines).
    Test / unmanagedSourceDirectories :=
      (if (l == devLine) Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "test" / "scala") else Nil),
    Test / unmanagedResourceDirectories := Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "test" / "resources"),
    sparkJarsDir := (ThisBuild / baseDirectory).value / ".build" / s"spark-${l.key}" / "jars",
    Compile / unmanagedJars ++= {
      val dir = sparkJarsDir.value
      if (!(dir / s"spark-sql_${l.scalaBinary}-${l.latest}.jar").isFile) sys.error(
        s"Spark ${l.latest}'s jars for Scala ${l.scalaBinary} are not in $dir: run `make spark-jars` (it " +
          (if (l.fromPyspark) s"unpacks them from the pyspark ${l.latest} release)." else "fetches them from Maven Central)."))
      (dir * "*.jar").classpath
    },
    // The native libraries for each platform of NativeLibraries.targets, packed into the jar under
    // io/ttlstore/native/<os>-<arch>/ (NativeFilter.platform picks the folder at run time): the TTL
    // filter, and the lazy file system built against this line's RocksDB headers.
    Compile / resourceGenerators += Def.task {
      NativeLibraries.filter((ThisBuild / baseDirectory).value, (Compile / resourceManaged).value,
        streams.value.cacheDirectory, streams.value.log)
    }.taskValue,
    Compile / resourceGenerators += Def.task {
      NativeLibraries.lazyFileSystem((ThisBuild / baseDirectory).value, (Compile / resourceManaged).value,
        sparkJarsDir.value, streams.value.cacheDirectory, streams.value.log)
    }.taskValue,
    Compile / resourceGenerators += buildProperties.taskValue,
    Compile / sourceGenerators += lineCapabilities.taskValue,
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    // scala-library is a compile dependency only: `package` writes a plain jar of our classes, and
    // Spark brings its own Scala at run time.
    Compile / packageBin / packageOptions += Package.ManifestAttributes(
      "Implementation-Title" -> "ttlstore",
      "Implementation-Version" -> version.value),
    Compile / packageBin / artifactPath := (ThisBuild / baseDirectory).value / "jvm" / "target" / "jars" /
      s"${l.name}_${l.scalaBinary}-${version.value}.jar",
    // The Apache License 2.0, as in the repository's root and the wheel.
    Compile / packageBin / mappings += (ThisBuild / baseDirectory).value / "LICENSE" -> "META-INF/LICENSE",
    // The Maven artifact io.ttlstore:ttlstore-spark-<line>_<scala> (`make publish-local` writes every
    // line's into the Maven repository jvm/target/maven-repo). Its pom names Spark's spark-sql, the rocksdbjni Spark ships
    // and Scala as `provided`: the Spark the jar is loaded into brings them, so `--packages` adds
    // this jar alone. Their versions are those of the pyspark jars the build compiles against.
    description := "A Spark Structured Streaming state store that forgets on purpose: state TTL for every " +
      "classic operator.",
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt")),
    // What Maven Central requires of a pom beside the above (python/_build/release.py checks it).
    homepage := Some(url(projectUrl("Homepage"))),
    scmInfo := Some({
      val git = s"scm:git:${projectUrl("Source")}.git"
      ScmInfo(url(projectUrl("Source")), git, git)
    }),
    pomExtra := <developers><developer><id>ttlstore</id><name>ttlstore contributors</name>
      <url>{projectUrl("Homepage")}</url></developer></developers>,
    pomIncludeRepository := (_ => false),
    publishMavenStyle := true,
    versionScheme := Some("early-semver"),
    // Scaladoc's links to private members are not errors in the published documentation.
    Compile / doc / scalacOptions += "-no-link-warnings",
    publishTo := Some(Resolver.file("ttlstore-local", (ThisBuild / baseDirectory).value / "jvm" / "target" / "maven-repo")),
    publishConfiguration := publishConfiguration.value.withOverwrite(true),
    // The Scaladoc jar, unless the Makefile publishes for its tests alone (TTLSTORE_SCALADOC=false).
    Compile / packageDoc / publishArtifact := !sys.env.get("TTLSTORE_SCALADOC").contains("false"),
    // Nothing of the tests (sbt would add their Scaladoc jar once the Scaladoc is on).
    Test / packageDoc / publishArtifact := false,
    pomPostProcess := { pom =>
      val bundled = (sparkJarsDir.value * "*.jar").get.map(_.getName)
      def versionOf(prefix: String): String =
        bundled.collectFirst { case n if n.startsWith(prefix) && n.endsWith(".jar") =>
          n.stripPrefix(prefix).stripSuffix(".jar")
        }.getOrElse(sys.error(s"the line's Spark jars hold no $prefix*.jar"))
      val provided = Seq(
        ("org.scala-lang", "scala-library", scalaVersion.value),
        ("org.apache.spark", s"spark-sql_${scalaBinaryVersion.value}", versionOf(s"spark-sql_${scalaBinaryVersion.value}-")),
        ("org.rocksdb", "rocksdbjni", versionOf("rocksdbjni-")))
      val dependencies =
        <dependencies>{
          provided.map { case (g, a, v) =>
            <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version><scope>provided</scope></dependency>
          }
        }</dependencies>
      new scala.xml.transform.RuleTransformer(new scala.xml.transform.RewriteRule {
        override def transform(n: scala.xml.Node): Seq[scala.xml.Node] =
          if (n.label == "dependencies") dependencies else n
      }).transform(pom).head
    },
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
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // ScalaTest's JVM runs C1 alone, as the Python suites' JVMs do (conf/quick-jvm.options, tests/conftest.py): its
    // suites end before C2 pays back (ScalaTest's 412 tests with sbt took 180 CPU-s instead of 263).
    // Test / runMain, which runs the benches (make bench-sweep), keeps the full JIT.
    Test / javaOptions ++= quickJvm((ThisBuild / baseDirectory).value),
    Test / run / javaOptions --= quickJvm((ThisBuild / baseDirectory).value)
  )

/** C1 alone, with a code cache that holds what it compiles: conf/quick-jvm.options (tests/conftest.py says why). */
def quickJvm(base: File): Seq[String] = IO.read(base / "conf" / "quick-jvm.options").trim.split("\\s+").toSeq

def line(key: String): SparkLine =
  sparkLines.find(_.key == key).getOrElse(sys.error(s"jvm/spark/lines.tsv has no line $key"))

// One project per row of jvm/spark/lines.tsv (sbt finds projects only as named values).
lazy val spark35 = lineProject(line("3.5"))
lazy val spark35_213 = lineProject(line("3.5_2.13"))
lazy val spark40 = lineProject(line("4.0"))
lazy val spark41 = lineProject(line("4.1"))
lazy val spark42 = lineProject(line("4.2"))
lazy val spark43 = lineProject(line("4.3"))

lazy val lineProjects: Seq[Project] = Seq(spark35, spark35_213, spark40, spark41, spark42, spark43)

lazy val root = (project in file("."))
  .aggregate(lineProjects.map(p => p: ProjectReference): _*)
  .settings(
    publish / skip := true,
    // A row of lines.tsv without its project would silently build nothing.
    Global / onLoad := (Global / onLoad).value.andThen { state =>
      val missing = sparkLines.map(_.id).filterNot(lineProjects.map(_.id).contains)
      if (missing.nonEmpty) sys.error(s"build.sbt has no project for ${missing.mkString(", ")} of jvm/spark/lines.tsv")
      state
    })
