package io.ttlstore.errors;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.spark.SparkThrowable;

/**
 * Every error ttlstore raises. {@code errorName} is stable (tests and users match on it); {@code
 * params} carry the facts the message is built from.
 *
 * <p>A {@link SparkThrowable} as Spark's own errors are: its condition is the name, with a SQLSTATE
 * ({@code ErrorConditions}) and the message parameters, so that a user catches it by condition
 * like Spark's, in a classic session or over Spark Connect (whose server sends each error's
 * condition and SQLSTATE to the client). Its message is ttlstore's own, not looked up in Spark's
 * registry of conditions, which does not hold ttlstore's: so every member that the interface would
 * answer from that registry is answered here. Spark 3.5 names the condition {@code getErrorClass},
 * 4.0 and later {@code getCondition}; both are implemented.
 *
 * <p>Plain Java, as is {@link io.ttlstore.spark.BuiltFor}: a jar in a Spark of another Scala version
 * must still be able to say so, before any Scala code of the wrong version runs.
 */
public final class TtlStoreException extends RuntimeException implements SparkThrowable {
  private static final long serialVersionUID = 2L;

  private final String errorName;
  private final String sqlState;
  private final Map<String, String> params;

  public TtlStoreException(String errorName, String sqlState, Map<String, String> params, String message,
      Throwable cause) {
    super("[" + errorName + "] " + message, cause);
    this.errorName = errorName;
    this.sqlState = sqlState;
    this.params = Collections.unmodifiableMap(new LinkedHashMap<>(params));
  }

  /** The error's stable name, such as {@code SPARK_LINE_MISMATCH}. */
  public String errorName() {
    return errorName;
  }

  /** The facts the message names. */
  public Map<String, String> params() {
    return params;
  }

  /** Spark 4.0 and later: the error condition, ttlstore's stable name. */
  public String getCondition() {
    return errorName;
  }

  /** Spark 3.5 (and, deprecated, later lines): the error condition, ttlstore's stable name. */
  public String getErrorClass() {
    return errorName;
  }

  public String getSqlState() {
    return sqlState;
  }

  public Map<String, String> getMessageParameters() {
    return params;
  }

  public boolean isInternalError() {
    return false;
  }
}
