/* Loads counting_file_system.cc's library into a JVM whose librocksdbjni is loaded: the JVM loads
 * librocksdbjni without RTLD_GLOBAL, so its symbols are first made global (the mapped copy reopened,
 * jvm/src/main/c/rocksdbjni_symbols.c), and the C++ library's undefined RocksDB symbols then bind to
 * that copy rather than to a second RocksDB. */
#include <dlfcn.h>
#include <jni.h>

#include "rocksdbjni_symbols.h"

/* The path of the librocksdbjni made global, or null with an exception thrown. */
JNIEXPORT jstring JNICALL Java_CountingFileSystemProbe_makeRocksdbjniGlobal(JNIEnv *env, jclass cls) {
  (void)cls;
  char path[4096] = {0};
  char error[4200] = {0};
  if (ttlstore_rocksdbjni_reopen(RTLD_GLOBAL, path, sizeof path, error, sizeof error) == NULL) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"), error);
    return NULL;
  }
  return (*env)->NewStringUTF(env, path);
}
