package io.ttlstore.spark;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import io.ttlstore.errors.TtlStoreException;

/**
 * The Spark line and Scala version this jar was built for, from the {@code io/ttlstore/build.properties}
 * the build writes into each line's jar, and the check that the Spark running it is of that line.
 * Each line's jar is compiled against that line's API, which changes between lines (methods gain
 * parameters, classes move) and between Scala versions (2.12 and 2.13 are binary incompatible): in
 * a Spark of another line it would fail somewhere in a task with a {@code NoSuchMethodError}, or break
 * the session's data source lookups, so the extension, the provider, the state source and the tools
 * refuse it by name first.
 *
 * <p>Plain Java, reading the running versions from the resources Spark and Scala ship: it must run
 * correctly on any Spark and either Scala, where this jar's Scala code cannot.
 */
public final class BuiltFor {
  private BuiltFor() {}

  private static final Properties PROPS = load("/io/ttlstore/build.properties");

  private static Properties load(String resource) {
    Properties p = new Properties();
    try (InputStream in = BuiltFor.class.getResourceAsStream(resource)) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      // An unreadable resource reads as unknown versions, which the check refuses by name.
    }
    return p;
  }

  private static String prop(String key) {
    return PROPS.getProperty(key, "unknown");
  }

  /** The Spark line ("4.3") this jar was built for. */
  public static String line() {
    return prop("spark.line");
  }

  /** The Scala binary version ("2.13") this jar was built for. */
  public static String scalaBinary() {
    return prop("scala.binary");
  }

  /** This jar's Maven artifact, such as {@code ttlstore-spark-4.3_2.13}. */
  public static String artifact() {
    return prop("artifact");
  }

  public static String version() {
    return prop("version");
  }

  /** Every line and Scala ttlstore is built for, as "4.3_2.13", oldest first. */
  public static List<String> builds() {
    List<String> out = new ArrayList<>();
    for (String b : PROPS.getProperty("spark.builds", "").split(",")) {
      if (!b.trim().isEmpty()) out.add(b.trim());
    }
    return Collections.unmodifiableList(out);
  }

  /** Every line ttlstore is built for ("3.5", ..., "4.3"). */
  public static List<String> lines() {
    List<String> out = new ArrayList<>();
    for (String b : builds()) {
      String line = b.split("_")[0];
      if (!out.contains(line)) out.add(line);
    }
    return Collections.unmodifiableList(out);
  }

  /** The line of a Spark version: "4.2.1" and "4.2.1-vendor-3" are of line "4.2". */
  public static String lineOf(String sparkVersion) {
    String[] parts = sparkVersion.split("[.-]");
    return parts.length < 2 ? sparkVersion : parts[0] + "." + parts[1];
  }

  /** The binary version of a Scala version: "2.13.16" is "2.13". */
  public static String scalaBinaryOf(String scalaVersion) {
    String[] parts = scalaVersion.split("\\.");
    return parts.length < 2 ? scalaVersion : parts[0] + "." + parts[1];
  }

  /**
   * Why this jar cannot run in Spark {@code sparkVersion} with Scala {@code scalaVersion}, if it
   * cannot. Pure: {@link #check} passes the running versions.
   */
  public static Optional<TtlStoreException> mismatch(String sparkVersion, String scalaVersion) {
    String runningLine = lineOf(sparkVersion);
    String runningScala = scalaBinaryOf(scalaVersion);
    if (runningLine.equals(line()) && runningScala.equals(scalaBinary())) return Optional.empty();
    String use = runningLine + "_" + runningScala;
    List<String> named = new ArrayList<>();
    for (String b : builds()) named.add(b.replace("_", " with Scala "));
    String jar = artifact() + " " + version();
    String advice = builds().contains(use)
        ? "Use the artifact for this Spark, io.ttlstore:ttlstore-spark-" + use + ":" + version()
            + " (ttlstore.configure() and `ttlstore jar` pick it for the installed pyspark), in spark.jars or "
            + "spark.jars.packages instead of this one."
        : "ttlstore is built for Spark " + String.join(", ", named) + ": run one of those.";
    Map<String, String> params = new LinkedHashMap<>();
    params.put("jar", jar);
    params.put("builtFor", line() + "/" + scalaBinary());
    params.put("running", sparkVersion + "/" + runningScala);
    // SQLSTATE 0A000 as in io.ttlstore.errors.ErrorConditions, which (Scala) cannot run here.
    return Optional.of(new TtlStoreException("SPARK_LINE_MISMATCH", "0A000", params,
        "This ttlstore jar (" + jar + ") is built for Spark " + line() + " with Scala " + scalaBinary()
            + ", but runs in Spark " + sparkVersion + " with Scala " + runningScala + "; Spark's state store API "
            + "differs between lines and Scala versions, so it would fail in a task. " + advice, null));
  }

  /** The running Spark's version, from the resource spark-core ships (as Spark's own SPARK_VERSION reads it). */
  static String runningSpark() {
    return load("/spark-version-info.properties").getProperty("version", "unknown");
  }

  /** The running Scala's version, from scala-library's own answer. */
  static String runningScala() {
    try {
      return (String) Class.forName("scala.util.Properties").getMethod("versionNumberString").invoke(null);
    } catch (ReflectiveOperationException e) {
      return "unknown";
    }
  }

  private static volatile Optional<TtlStoreException> problem;

  private static Optional<TtlStoreException> problem() {
    Optional<TtlStoreException> p = problem;
    if (p == null) {
      p = mismatch(runningSpark(), runningScala());
      problem = p;
    }
    return p;
  }

  /** Fails with SPARK_LINE_MISMATCH unless the running Spark is of this jar's line and Scala. */
  public static void check() {
    Optional<TtlStoreException> p = problem();
    if (p.isPresent()) throw p.get();
  }

  static final String PROVIDER_KEY = "spark.sql.streaming.stateStore.providerClass";
  static final String PROVIDER = "io.ttlstore.TtlStateStoreProvider";

  /**
   * Fails with SPARK_LINE_MISMATCH if the running Spark is of another line or Scala and the active
   * session asks for ttlstore's provider; does nothing otherwise (for a session that does not use
   * ttlstore, a jar of another line on its classpath is harmless).
   */
  public static void refuseIfAskedFor() {
    Optional<TtlStoreException> p = problem();
    if (p.isPresent()) {
      scala.Option<org.apache.spark.sql.SparkSession> active = org.apache.spark.sql.SparkSession.getActiveSession();
      if (active.isDefined() && PROVIDER.equals(active.get().conf().get(PROVIDER_KEY, ""))) throw p.get();
    }
  }
}
