// The JNI side of io.ttlstore.store.lazyfs.LazyFileSystem: a LazyFileSystem (lazy_file_system.h) and the RocksDB Env
// over it, owned by the Java object as one handle.
#include <jni.h>

#include <memory>
#include <string>

#include <rocksdb/env.h>

#include "lazy_file_system.h"

namespace {

using ttlstore::LazyFileSystem;

struct Handle {
  std::shared_ptr<LazyFileSystem> fs;
  std::unique_ptr<ROCKSDB_NAMESPACE::Env> env;
};

Handle* handle(jlong h) { return reinterpret_cast<Handle*>(h); }

std::string text(JNIEnv* env, jstring s) {
  const char* chars = env->GetStringUTFChars(s, nullptr);
  std::string out = chars == nullptr ? "" : chars;
  if (chars != nullptr) env->ReleaseStringUTFChars(s, chars);
  return out;
}

}  // namespace

extern "C" {

#define LAZY(name) Java_io_ttlstore_store_lazyfs_LazyFileSystem_##name

// A handle, or 0 with a Java exception pending.
JNIEXPORT jlong JNICALL LAZY(create)(JNIEnv* env, jclass, jobject reads, jboolean remote_mode) {
  std::shared_ptr<const ttlstore::RangedReads> ranged = ttlstore::RangedReads::Of(env, reads);
  if (ranged == nullptr) return 0;
  auto* h = new Handle();
  h->fs = std::make_shared<LazyFileSystem>(ROCKSDB_NAMESPACE::FileSystem::Default(), ranged, remote_mode == JNI_TRUE);
  h->env = ROCKSDB_NAMESPACE::NewCompositeEnv(h->fs);
  return reinterpret_cast<jlong>(h);
}

JNIEXPORT jlong JNICALL LAZY(env)(JNIEnv*, jclass, jlong h) { return reinterpret_cast<jlong>(handle(h)->env.get()); }

JNIEXPORT void JNICALL LAZY(serveRemotely)(JNIEnv* env, jclass, jlong h, jstring path, jlong size, jlong file) {
  handle(h)->fs->ServeRemotely(text(env, path), static_cast<uint64_t>(size), file);
}

JNIEXPORT jboolean JNICALL LAZY(markLocal)(JNIEnv* env, jclass, jlong h, jstring path) {
  return handle(h)->fs->MarkLocal(text(env, path)) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jboolean JNICALL LAZY(demote)(JNIEnv* env, jclass, jlong h, jstring path, jlong size, jlong file) {
  return handle(h)->fs->Demote(text(env, path), static_cast<uint64_t>(size), file) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jlong JNICALL LAZY(lastRead)(JNIEnv* env, jclass, jlong h, jstring path) {
  return handle(h)->fs->LastRead(text(env, path));
}

// Remote files still registered, remote files opened, ranged reads, the bytes they read, reads switched to local.
JNIEXPORT jlongArray JNICALL LAZY(counts)(JNIEnv* env, jclass, jlong h) {
  const ttlstore::LazyCounts& c = handle(h)->fs->counts();
  jlong values[5] = {handle(h)->fs->RemoteFiles(), c.remote_opens.load(), c.ranged_reads.load(),
                     c.ranged_bytes.load(), c.switched_reads.load()};
  jlongArray array = env->NewLongArray(5);
  if (array != nullptr) env->SetLongArrayRegion(array, 0, 5, values);
  return array;
}

// Once every DB that used the Env is closed.
JNIEXPORT void JNICALL LAZY(destroy)(JNIEnv*, jclass, jlong h) { delete handle(h); }
}
