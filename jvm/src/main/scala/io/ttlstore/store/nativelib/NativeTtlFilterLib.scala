package io.ttlstore.store.nativelib

/** The JNI entry points of `libttlstore_filter` (jvm/src/main/c/ttl_filter_jni.c). */
private[ttlstore] final class NativeTtlFilterLib {

  /** Binds to the librocksdbjni already loaded; null, or what is missing. */
  @native def bind(): String

  /** A new filter and its state: `Array(filterHandle, stateHandle)`; null if it cannot be made. */
  @native def create(ttlMs: Long, now: Long, timestampOffset: Int): Array[Long]
  @native def setNow(state: Long, now: Long): Unit
  @native def setTtl(state: Long, ttlMs: Long): Unit
  @native def removed(state: Long): Long
}
