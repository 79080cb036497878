package io.ttlstore.errors;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every error ttlstore raises. {@code errorName} is stable (tests and users match on it); {@code
 * params} carry the facts the message is built from. We do not reuse Spark's error-class exceptions:
 * Spark looks their names up in its own registry and would fail on ours.
 *
 * <p>Plain Java, as is {@link io.ttlstore.spark.BuiltFor}: a jar in a Spark of another Scala version
 * must still be able to say so, before any Scala code of the wrong version runs.
 */
public final class TtlStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String errorName;
  private final Map<String, String> params;

  public TtlStoreException(String errorName, Map<String, String> params, String message, Throwable cause) {
    super("[" + errorName + "] " + message, cause);
    this.errorName = errorName;
    this.params = Collections.unmodifiableMap(new LinkedHashMap<>(params));
  }

  public TtlStoreException(String errorName, Map<String, String> params, String message) {
    this(errorName, params, message, null);
  }

  /** The error's stable name, such as {@code SPARK_LINE_MISMATCH}. */
  public String errorName() {
    return errorName;
  }

  /** The facts the message names. */
  public Map<String, String> params() {
    return params;
  }
}
