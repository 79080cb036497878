/*
 * Makes the loaded librocksdbjni's symbols global, for io.ttlstore.store.lazyfs.LazyFileSystem.load: the lazy file
 * system (jvm/src/main/cpp) derives from RocksDB's C++ classes, so its undefined RocksDB symbols (its vtables' among
 * them, bound when it is loaded) must bind to the copy of RocksDB the JVM has, which the JVM loaded without
 * RTLD_GLOBAL. The copy is reopened with RTLD_NOLOAD | RTLD_GLOBAL, never loaded a second time.
 */
#include <dlfcn.h>
#include <jni.h>

#include "rocksdbjni_symbols.h"

/* The path of the librocksdbjni made global, or null with an IllegalStateException thrown saying why. */
JNIEXPORT jstring JNICALL Java_io_ttlstore_store_lazyfs_LazyFileSystem_makeRocksdbjniGlobal(JNIEnv *env, jclass cls) {
  (void)cls;
  char path[4096] = {0};
  char error[4200] = {0};
  if (ttlstore_rocksdbjni_reopen(RTLD_GLOBAL, path, sizeof path, error, sizeof error) == NULL) {
    jclass thrown = (*env)->FindClass(env, "java/lang/IllegalStateException");
    if (thrown != NULL) (*env)->ThrowNew(env, thrown, error);
    return NULL;
  }
  return (*env)->NewStringUTF(env, path);
}
