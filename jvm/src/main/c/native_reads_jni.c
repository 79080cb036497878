/*
 * ttlstore's point read: RocksDB's Get through the C API of the librocksdbjni the JVM already
 * loaded (docs/native-filter.md, "The point read").
 *
 * Why: RocksJava 9 (Spark 4.x's rocksdbjni) reports a key that is not there by throwing a C++
 * exception inside its JNI wrapper and catching it (KVException::ThrowOnError). Unwinding costs
 * more than the lookup itself: on new keys (deduplication, a growing aggregation) it was about a
 * fifth of the task threads' time. rocksdb_get_pinned_cf returns NULL for a missing key instead.
 *
 * The C API takes its own wrappers; two of them are a single pointer to the C++ object that
 * RocksJava's handles hold (struct rocksdb_t { DB* rep; }, struct rocksdb_column_family_handle_t
 * { ColumnFamilyHandle* rep; ... }, the same in RocksDB 8.3 and 9.8), so a local struct with that
 * pointer first stands for them. The read options are the C API's own defaults, as RocksJava's
 * `new ReadOptions()` that the handle uses elsewhere.
 */
#define _GNU_SOURCE
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocksdbjni_symbols.h"

typedef void *(*get_pinned_cf_fn)(void *, const void *, void *, const char *, size_t, char **);
typedef const char *(*pinnable_value_fn)(const void *, size_t *);
typedef void (*pinnable_destroy_fn)(void *);
typedef void *(*readoptions_create_fn)(void);
typedef void (*free_fn)(void *);

static get_pinned_cf_fn get_pinned_cf = NULL;
static pinnable_value_fn pinnable_value = NULL;
static pinnable_destroy_fn pinnable_destroy = NULL;
static free_fn rocksdb_free_ptr = NULL;
static void *read_options = NULL;
static char bind_error[1024];

/* The C API's wrappers around one pointer (only `rep` is read by rocksdb_get_pinned_cf). */
struct db_ref { void *rep; };
struct family_ref { void *rep; unsigned char immortal; };

/* Keys up to this size are copied to the stack; larger ones to the heap. */
#define STACK_KEY_BYTES 512

/* Binds to the loaded librocksdbjni; returns NULL, or what is missing. Idempotent. */
JNIEXPORT jstring JNICALL Java_io_ttlstore_store_nativelib_NativeReadsLib_bind(JNIEnv *env, jobject self) {
  (void)self;
  if (get_pinned_cf != NULL) return NULL;
  static const char *const names[] = {"rocksdb_get_pinned_cf", "rocksdb_pinnableslice_value",
                                      "rocksdb_pinnableslice_destroy", "rocksdb_readoptions_create", "rocksdb_free"};
  void *found[5];
  if (ttlstore_rocksdbjni_symbols(names, found, 5, bind_error, sizeof bind_error) != 0)
    return (*env)->NewStringUTF(env, bind_error);
  readoptions_create_fn create_options;
  memcpy(&create_options, &found[3], sizeof create_options);
  read_options = create_options();
  memcpy(&pinnable_value, &found[1], sizeof pinnable_value);
  memcpy(&pinnable_destroy, &found[2], sizeof pinnable_destroy);
  memcpy(&rocksdb_free_ptr, &found[4], sizeof rocksdb_free_ptr);
  memcpy(&get_pinned_cf, &found[0], sizeof get_pinned_cf);
  return NULL;
}

static void throw_rocksdb(JNIEnv *env, const char *message) {
  jclass rocks = (*env)->FindClass(env, "org/rocksdb/RocksDBException");
  if (rocks != NULL) (*env)->ThrowNew(env, rocks, message);
}

/* The value of `key` in the family, or NULL if absent; a RocksDBException on a failed read. */
JNIEXPORT jbyteArray JNICALL Java_io_ttlstore_store_nativelib_NativeReadsLib_get(JNIEnv *env, jobject self, jlong db,
                                                                    jlong family, jbyteArray key) {
  (void)self;
  jsize key_length = (*env)->GetArrayLength(env, key);
  char stack_key[STACK_KEY_BYTES];
  char *k = key_length <= STACK_KEY_BYTES ? stack_key : malloc((size_t)key_length);
  if (k == NULL) { throw_rocksdb(env, "out of memory copying a key"); return NULL; }
  (*env)->GetByteArrayRegion(env, key, 0, key_length, (jbyte *)k);
  struct db_ref d = {(void *)(intptr_t)db};
  struct family_ref f = {(void *)(intptr_t)family, 0};
  char *error = NULL;
  void *pinned = get_pinned_cf(&d, read_options, &f, k, (size_t)key_length, &error);
  if (k != stack_key) free(k);
  if (error != NULL) {
    throw_rocksdb(env, error);
    rocksdb_free_ptr(error);
    return NULL;
  }
  if (pinned == NULL) return NULL;
  size_t value_length = 0;
  const char *value = pinnable_value(pinned, &value_length);
  jbyteArray out = (*env)->NewByteArray(env, (jsize)value_length);
  if (out != NULL) (*env)->SetByteArrayRegion(env, out, 0, (jsize)value_length, (const jbyte *)value);
  pinnable_destroy(pinned);
  return out;
}
