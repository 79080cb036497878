import java.io.File
import java.util.Locale

import scala.sys.process.Process

import sbt._
import sbt.util.Logger

/**
 * The jar's native libraries, built by sbt for every platform of [[targets]] into the jar's resources under
 * io/ttlstore/native/<os>-<arch>/ (io.ttlstore.store.nativelib.NativeFilter.platform picks the folder at run time),
 * with the JNI headers of the JDK that runs sbt (jni_md.h is the same for every Linux on LP64); each rebuilt only
 * when a source changes:
 *  - libttlstore_filter.so, from jvm/src/main/c: the TTL compaction filter and the point read (C, through RocksDB's
 *    C API);
 *  - libttlstore_lazy_fs.so, from jvm/src/main/cpp: the lazy file system (C++, derived from RocksDB's classes), built
 *    against the RocksDB headers jvm/spark/rocksdb-headers.tsv names for the rocksdbjni of the line's Spark jars, as
 *    that rocksdbjni is built: the old C++ ABI and no RTTI.
 */
object NativeLibraries {

  /** `linux-x86_64`, `linux-aarch64`, ...: as io.ttlstore.store.nativelib.NativeFilter.platform computes it. */
  def hostPlatform: String = {
    val os = sys.props("os.name").toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "")
    val arch = sys.props("os.arch").toLowerCase(Locale.ROOT) match {
      case "amd64" | "x86_64" => "x86_64"
      case "arm64" | "aarch64" => "aarch64"
      case other => other
    }
    s"$os-$arch"
  }

  /** The environment variable that names another cross compiler (`CC` or `CXX`) for `platform`. */
  private def crossVariable(compiler: String, platform: String): String =
    s"${compiler}_${platform.replace('-', '_').toUpperCase(Locale.ROOT)}"

  /** Names the platforms to build for: `all` (the default) or `host`. */
  val PlatformsVariable = "TTLSTORE_NATIVE_PLATFORMS"

  /**
   * The platforms the jar carries the native libraries for, each with the C compiler that builds them here. A
   * Linux build makes both linux-x86_64 and linux-aarch64 (Graviton, Ampere: common for Spark clusters): the host's
   * with $CC (else cc), the other with Debian's cross compiler (`<arch>-linux-gnu-gcc`, or $CC_LINUX_AARCH64 /
   * $CC_LINUX_X86_64). Elsewhere, or with TTLSTORE_NATIVE_PLATFORMS=host (`make`, `make demo`: no cross compiler
   * needed), only the host's.
   */
  def targets: Seq[(String, String)] = {
    val linux = Seq("linux-x86_64" -> "x86_64-linux-gnu-gcc", "linux-aarch64" -> "aarch64-linux-gnu-gcc")
    val host = sys.env.getOrElse("CC", "cc")
    val all = sys.env.getOrElse(PlatformsVariable, "all") match {
      case "all" => true
      case "host" => false
      case other => sys.error(s"$PlatformsVariable=$other: set it to all (every platform the jar ships) or host.")
    }
    if (!all || !linux.exists(_._1 == hostPlatform)) Seq(hostPlatform -> host)
    else linux.map { case (platform, cross) =>
      platform -> (if (platform == hostPlatform) host else sys.env.getOrElse(crossVariable("CC", platform), cross))
    }
  }

  /** The C++ compiler for `platform` beside its C compiler `cc`: $CXX (or $CXX_LINUX_AARCH64, ...), else g++. */
  private def cxxFor(platform: String, cc: String): String =
    if (platform == hostPlatform) sys.env.getOrElse("CXX", "c++")
    else sys.env.getOrElse(crossVariable("CXX", platform), cc.stripSuffix("gcc") + "g++")

  private def jni: Seq[String] = {
    val jdk = file(sys.props("java.home"))
    val os = sys.props("os.name").toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "")
    Seq(s"-I$jdk/include", s"-I$jdk/include/$os")
  }

  /** Runs `command`, or fails naming what building `what` for `platform` needs. */
  private def compile(log: Logger, what: String, platform: String, command: Seq[String], needs: String): Unit = {
    log.info(command.mkString(s"building $what for $platform: ", " ", ""))
    val exit = try Process(command).! catch { case _: java.io.IOException => -1 }
    if (exit != 0)
      sys.error(s"Building $what for $platform failed (see the compiler's output above); it needs $needs and a JDK " +
        "with JNI headers.")
  }

  private def crossNeeds(kind: String, compiler: String, suffix: String, package_ : String, variable: String): String =
    s"the $kind cross compiler $compiler (Debian's package $package_${compiler.stripSuffix(suffix).replace('_', '-')}, " +
      s"which `make toolchain` installs; or name another in $$$variable)"

  /** libttlstore_filter.so from jvm/src/main/c, for every platform of [[targets]]. */
  def filter(base: File, resources: File, cacheDir: File, log: Logger): Seq[File] = {
    val src = base / "jvm" / "src" / "main" / "c"
    val sources = (src * "*.c").get.sortBy(_.getName)
    // One cache per set of platforms: a build that adds a platform builds them all again.
    val cache = cacheDir / targets.map(_._1).mkString("native-filter-", "+", "")
    val build = FileFunction.cached(cache, FilesInfo.hash) { _ =>
      targets.map { case (platform, cc) =>
        val out = resources / "io" / "ttlstore" / "native" / platform / "libttlstore_filter.so"
        IO.createDirectory(out.getParentFile)
        val needs = if (platform == hostPlatform) "a C compiler (cc, or $CC)"
          else crossNeeds("C", cc, "-gcc", "gcc-", crossVariable("CC", platform))
        compile(log, "the native TTL filter", platform, Seq(cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
          "-fPIC", "-shared") ++ jni ++ Seq("-o", out.getPath) ++ sources.map(_.getPath) :+ "-ldl", needs)
        out
      }.toSet
    }
    build(((src * "*.c").get ++ (src * "*.h").get).toSet).toSeq
  }

  /** The lines' builds run side by side: headers are linked into .build/rocksdb-headers by one at a time. */
  private val headersLock = new Object

  /**
   * RocksDB's include directory for rocksdbjni `version`: .build/rocksdb-headers/<version>, linked by
   * jvm/src/main/cpp/rocksdb_headers.py (cargo fetches the crate jvm/spark/rocksdb-headers.tsv names).
   */
  private def rocksDbHeaders(base: File, version: String): File = headersLock.synchronized {
    val include = base / ".build" / "rocksdb-headers" / version
    if (!(include / "rocksdb" / "file_system.h").isFile) {
      val script = base / "jvm" / "src" / "main" / "cpp" / "rocksdb_headers.py"
      val exit = try Process(Seq("python3", script.getPath, version), base).! catch {
        case _: java.io.IOException => -1
      }
      if (exit != 0 || !(include / "rocksdb" / "file_system.h").isFile)
        sys.error(s"RocksDB's headers for rocksdbjni $version could not be fetched (see above): $script fetches them " +
          "with cargo, which docs/development.md lists among what a machine needs.")
    }
    include.getCanonicalFile
  }

  /** libttlstore_lazy_fs.so from jvm/src/main/cpp, for every platform of [[targets]], on the line's rocksdbjni. */
  def lazyFileSystem(base: File, resources: File, sparkJars: File, cacheDir: File, log: Logger): Seq[File] = {
    val src = base / "jvm" / "src" / "main" / "cpp"
    val version = (sparkJars * "rocksdbjni-*.jar").get.map(_.getName.stripPrefix("rocksdbjni-").stripSuffix(".jar"))
    match {
      case Seq(v) => v
      case found => sys.error(s"$sparkJars holds ${found.size} rocksdbjni jars, not one: run `make spark-jars` again")
    }
    val include = rocksDbHeaders(base, version)
    val sources = (src * "*.cc").get.sortBy(_.getName)
    val cache = cacheDir / targets.map(_._1).mkString(s"lazy-fs-$version-", "+", "")
    val build = FileFunction.cached(cache, FilesInfo.hash) { _ =>
      targets.map { case (platform, cc) =>
        val cxx = cxxFor(platform, cc)
        val out = resources / "io" / "ttlstore" / "native" / platform / "libttlstore_lazy_fs.so"
        IO.createDirectory(out.getParentFile)
        val needs = if (platform == hostPlatform) "a C++ compiler (c++, or $CXX)"
          else crossNeeds("C++", cxx, "-g++", "g++-", crossVariable("CXX", platform))
        compile(log, s"the lazy file system on rocksdbjni $version", platform, Seq(cxx, "-std=c++17", "-O2", "-Wall",
          "-Wextra", "-Werror", "-fPIC", "-shared", "-fno-rtti", "-D_GLIBCXX_USE_CXX11_ABI=0", "-isystem",
          include.getPath, s"-I$src") ++ jni ++ Seq("-o", out.getPath) ++ sources.map(_.getPath), needs)
        out
      }.toSet
    }
    build(((src * "*.cc").get ++ (src * "*.h").get).toSet).toSeq
  }
}
