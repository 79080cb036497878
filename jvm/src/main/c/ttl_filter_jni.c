/*
 * ttlstore's native TTL compaction filter, made with the RocksDB C API that the librocksdbjni
 * already loaded by the JVM exports: no RocksDB fork, no second RocksDB (docs/native-filter.md).
 *
 * The object rocksdb_compactionfilter_create returns is a rocksdb::CompactionFilter, so its address
 * is what RocksJava's AbstractCompactionFilter(long) wraps; RocksJava deletes it when the Java
 * object is closed, which calls filter_destroy and frees the state. We never link against
 * librocksdbjni (it has no SONAME): we find it among the loaded objects and dlsym what we need.
 *
 * "Now" is pushed by the JVM into an atomic; the filter never calls back into the JVM per row.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocksdbjni_symbols.h"
#include "ttl_expiry.h"

typedef unsigned char (*filter_fn)(void *, int, const char *, size_t, const char *, size_t, char **,
                                   size_t *, unsigned char *);
typedef void *(*create_fn)(void *, void (*)(void *), filter_fn, const char *(*)(void *));
typedef void (*destroy_fn)(void *);

static create_fn compactionfilter_create = NULL;
static destroy_fn compactionfilter_destroy = NULL;
static char bind_error[1024];

/* One filter's state. The JVM changes ttl_ms and now while compactions read them: atomics, read
 * relaxed (a compaction that sees the old value for a moment removes less, never more than the
 * version that pushed it hides). timestamp_offset is fixed at creation. */
struct filter_state {
  _Atomic int64_t ttl_ms;
  _Atomic int64_t now;
  _Atomic int64_t removed;
  size_t timestamp_offset;
};

static unsigned char filter_decide(void *state, int level, const char *key, size_t key_length,
                                   const char *value, size_t value_length, char **new_value,
                                   size_t *new_value_length, unsigned char *value_changed) {
  (void)level; (void)key; (void)key_length; (void)new_value; (void)new_value_length;
  struct filter_state *s = state;
  *value_changed = 0;
  if (value_length < s->timestamp_offset) return 0;
  int64_t ttl_ms = atomic_load_explicit(&s->ttl_ms, memory_order_relaxed);
  int64_t now = atomic_load_explicit(&s->now, memory_order_relaxed);
  if (ttl_should_remove((const unsigned char *)value + s->timestamp_offset,
                        value_length - s->timestamp_offset, ttl_ms, now)) {
    atomic_fetch_add_explicit(&s->removed, 1, memory_order_relaxed);
    return 1;
  }
  return 0;
}

static void filter_destroy(void *state) { free(state); }

static const char *filter_name(void *state) {
  (void)state;
  return "io.ttlstore.TtlCompactionFilter";
}

/* Binds to the loaded librocksdbjni; returns NULL, or what is missing. Idempotent. */
JNIEXPORT jstring JNICALL Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_bind(JNIEnv *env, jobject self) {
  (void)self;
  if (compactionfilter_create != NULL) return NULL;
  static const char *const names[] = {"rocksdb_compactionfilter_create", "rocksdb_compactionfilter_destroy"};
  void *found[2];
  if (ttlstore_rocksdbjni_symbols(names, found, 2, bind_error, sizeof bind_error) != 0)
    return (*env)->NewStringUTF(env, bind_error);
  void *create = found[0];
  void *destroy = found[1];
  memcpy(&compactionfilter_destroy, &destroy, sizeof destroy);
  memcpy(&compactionfilter_create, &create, sizeof create);
  return NULL;
}

/* A new filter: returns {filter handle, state handle}; the filter owns the state. The timestamp is
 * read at timestamp_offset of each value; ttl_ms <= 0 removes nothing. */
JNIEXPORT jlongArray JNICALL Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_create(JNIEnv *env, jobject self,
                                                                         jlong ttl_ms, jlong now,
                                                                         jint timestamp_offset) {
  (void)self;
  if (compactionfilter_create == NULL || timestamp_offset < 0) return NULL;
  struct filter_state *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->timestamp_offset = (size_t)timestamp_offset;
  atomic_store(&s->ttl_ms, ttl_ms);
  atomic_store(&s->now, now);
  atomic_store(&s->removed, 0);
  void *filter = compactionfilter_create(s, filter_destroy, filter_decide, filter_name);
  if (filter == NULL) { free(s); return NULL; }
  jlongArray out = (*env)->NewLongArray(env, 2);
  if (out == NULL) { compactionfilter_destroy(filter); return NULL; } /* frees s too */
  jlong handles[2] = {(jlong)(intptr_t)filter, (jlong)(intptr_t)s};
  (*env)->SetLongArrayRegion(env, out, 0, 2, handles);
  return out;
}

JNIEXPORT void JNICALL Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_setNow(JNIEnv *env, jobject self,
                                                                  jlong state, jlong now) {
  (void)env; (void)self;
  atomic_store_explicit(&((struct filter_state *)(intptr_t)state)->now, now, memory_order_relaxed);
}

JNIEXPORT void JNICALL Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_setTtl(JNIEnv *env, jobject self,
                                                                  jlong state, jlong ttl_ms) {
  (void)env; (void)self;
  atomic_store_explicit(&((struct filter_state *)(intptr_t)state)->ttl_ms, ttl_ms, memory_order_relaxed);
}

JNIEXPORT jlong JNICALL Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_removed(JNIEnv *env, jobject self,
                                                                    jlong state) {
  (void)env; (void)self;
  return atomic_load_explicit(&((struct filter_state *)(intptr_t)state)->removed, memory_order_relaxed);
}
