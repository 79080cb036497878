package io.ttlstore.store.nativelib

/**
 * The point read of `libttlstore_filter` (jvm/src/main/c/native_reads_jni.c): RocksDB's Get through
 * its C API, which reports a missing key as null. RocksJava 9's `get` throws and catches a C++
 * exception inside its JNI wrapper for every missing key (docs/native-filter.md, "The point read").
 */
private[ttlstore] final class NativeReadsLib {

  /** Binds to the librocksdbjni already loaded; null, or what is missing. */
  @native def bind(): String

  /** The value of `key` in the family `family` of the DB `db` (RocksJava's native handles), or null. */
  @native def get(db: Long, family: Long, key: Array[Byte]): Array[Byte]
}
