// Ranged reads of remote files through Java: see ranged_reads.h.
#include "ranged_reads.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include <rocksdb/env.h>

namespace ttlstore {

using ROCKSDB_NAMESPACE::IOStatus;

namespace {

JavaVM* java_vm = nullptr;

// Set by exit() (std::atexit), before RocksDB's default Env joins its threads.
std::atomic<bool> process_exiting{false};

void mark_process_exiting() { process_exiting = true; }

// The calling thread's JNIEnv; a thread this attached is detached when it ends, unless the process is exiting.
class AttachedThread {
 public:
  ~AttachedThread() {
    if (attached_ && !process_exiting.load()) java_vm->DetachCurrentThread();
  }

  JNIEnv* env() {
    JNIEnv* env = nullptr;
    if (java_vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) == JNI_OK) return env;
    if (java_vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), nullptr) != JNI_OK) return nullptr;
    attached_ = true;
    return env;
  }

 private:
  bool attached_ = false;
};

thread_local AttachedThread this_thread;

// "path: the Java exception", the exception cleared: what a failed read reports to RocksDB.
std::string pending_exception(JNIEnv* env, const std::string& path) {
  jthrowable thrown = env->ExceptionOccurred();
  env->ExceptionClear();
  std::string message = path + ": ";
  jclass object = env->FindClass("java/lang/Object");
  jmethodID to_string = object == nullptr ? nullptr : env->GetMethodID(object, "toString", "()Ljava/lang/String;");
  jstring text = to_string == nullptr ? nullptr : static_cast<jstring>(env->CallObjectMethod(thrown, to_string));
  if (env->ExceptionCheck() || text == nullptr) {
    env->ExceptionClear();
    return message + "a Java exception whose description failed too";
  }
  const char* chars = env->GetStringUTFChars(text, nullptr);
  message += chars == nullptr ? "a Java exception" : chars;
  if (chars != nullptr) env->ReleaseStringUTFChars(text, chars);
  env->DeleteLocalRef(text);
  env->DeleteLocalRef(thrown);
  return message;
}

}  // namespace

std::shared_ptr<const RangedReads> RangedReads::Of(JNIEnv* env, jobject reads) {
  if (java_vm == nullptr && env->GetJavaVM(&java_vm) != JNI_OK) return nullptr;
  static std::once_flag exit_watched;
  std::call_once(exit_watched, [] {
    ROCKSDB_NAMESPACE::Env::Default();
    std::atexit(mark_process_exiting);
  });
  jclass type = env->GetObjectClass(reads);
  jmethodID read = env->GetMethodID(type, "read", "(JJLjava/nio/ByteBuffer;)I");
  if (read == nullptr) return nullptr;  // NoSuchMethodError pending
  return std::make_shared<const RangedReads>(env->NewGlobalRef(reads), read);
}

RangedReads::~RangedReads() {
  JNIEnv* env = this_thread.env();
  if (env != nullptr) env->DeleteGlobalRef(reads_);
}

IOStatus RangedReads::Read(jlong file, const std::string& path, uint64_t offset, size_t n, char* scratch,
                           size_t* got) const {
  JNIEnv* env = this_thread.env();
  if (env == nullptr) return IOStatus::IOError(path, "this thread could not be attached to the JVM");
  jobject buffer = env->NewDirectByteBuffer(scratch, static_cast<jlong>(n));
  if (buffer == nullptr) return IOStatus::IOError(pending_exception(env, path));
  jint read = env->CallIntMethod(reads_, read_, file, static_cast<jlong>(offset), buffer);
  env->DeleteLocalRef(buffer);
  if (env->ExceptionCheck()) return IOStatus::IOError(pending_exception(env, path));
  if (read < 0 || static_cast<size_t>(read) > n) {
    return IOStatus::IOError(path, "the ranged read returned " + std::to_string(read) + " bytes for " +
                                       std::to_string(n) + " at offset " + std::to_string(offset));
  }
  *got = static_cast<size_t>(read);
  return IOStatus::OK();
}

}  // namespace ttlstore
