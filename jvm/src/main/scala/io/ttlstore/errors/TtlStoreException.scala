package io.ttlstore.errors

/**
 * Every error ttlstore raises. `errorName` is stable (tests and users match on it); `params` carry
 * the facts the message is built from. We do not reuse Spark's error-class exceptions: Spark looks
 * their names up in its own registry and would fail on ours.
 */
final class TtlStoreException(
    val errorName: String,
    val params: Map[String, String],
    message: String,
    cause: Throwable = null)
  extends RuntimeException(s"[$errorName] $message", cause)
