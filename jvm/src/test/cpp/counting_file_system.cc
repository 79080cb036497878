// A RocksDB FileSystem of ttlstore's own, loaded into a Spark line's real librocksdbjni (issue 51, first step).
//
// CountingFileSystem forwards every call to RocksDB's default file system and counts the random-access files it
// opens and the reads they serve. It is built against the RocksDB headers that jvm/spark/rocksdb-headers.tsv names for
// that rocksdbjni, on the old C++ ABI and without RTTI as rocksdbjni is; its undefined symbols bind to the
// librocksdbjni already in the JVM (load_rocksdb_file_system.c makes that copy's symbols global first), so one RocksDB
// is mapped. prove_file_system.py checks its vtables slot by slot against the binary's and runs
// CountingFileSystemProbe.java with it under AddressSanitizer and UndefinedBehaviorSanitizer.
#include <jni.h>

#include <atomic>
#include <memory>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

namespace {

using ROCKSDB_NAMESPACE::Env;
using ROCKSDB_NAMESPACE::FileOptions;
using ROCKSDB_NAMESPACE::FileSystem;
using ROCKSDB_NAMESPACE::FileSystemWrapper;
using ROCKSDB_NAMESPACE::FSRandomAccessFile;
using ROCKSDB_NAMESPACE::FSRandomAccessFileOwnerWrapper;
using ROCKSDB_NAMESPACE::FSReadRequest;
using ROCKSDB_NAMESPACE::IODebugContext;
using ROCKSDB_NAMESPACE::IOOptions;
using ROCKSDB_NAMESPACE::IOStatus;
using ROCKSDB_NAMESPACE::Slice;

std::atomic<long> files_opened{0};
std::atomic<long> reads{0};
std::atomic<long> bytes_read{0};

class CountingFile : public FSRandomAccessFileOwnerWrapper {
 public:
  explicit CountingFile(std::unique_ptr<FSRandomAccessFile>&& file) : FSRandomAccessFileOwnerWrapper(std::move(file)) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options, Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    IOStatus status = target()->Read(offset, n, options, result, scratch, dbg);
    reads++;
    if (status.ok()) bytes_read += static_cast<long>(result->size());
    return status;
  }

  IOStatus MultiRead(FSReadRequest* requests, size_t count, const IOOptions& options, IODebugContext* dbg) override {
    reads += static_cast<long>(count);
    return target()->MultiRead(requests, count, options, dbg);
  }
};

class CountingFileSystem : public FileSystemWrapper {
 public:
  explicit CountingFileSystem(const std::shared_ptr<FileSystem>& target) : FileSystemWrapper(target) {}

  const char* Name() const override { return "TtlstoreCountingFileSystem"; }

  IOStatus NewRandomAccessFile(const std::string& name, const FileOptions& options,
                               std::unique_ptr<FSRandomAccessFile>* result, IODebugContext* dbg) override {
    std::unique_ptr<FSRandomAccessFile> file;
    IOStatus status = target()->NewRandomAccessFile(name, options, &file, dbg);
    if (status.ok()) {
      files_opened++;
      result->reset(new CountingFile(std::move(file)));
    }
    return status;
  }
};

}  // namespace

extern "C" {

// An Env whose file system is a CountingFileSystem over RocksDB's default; freed by deleteEnv.
JNIEXPORT jlong JNICALL Java_CountingFileSystemProbe_newEnv(JNIEnv*, jclass) {
  std::shared_ptr<FileSystem> fs = std::make_shared<CountingFileSystem>(FileSystem::Default());
  return reinterpret_cast<jlong>(ROCKSDB_NAMESPACE::NewCompositeEnv(fs).release());
}

JNIEXPORT void JNICALL Java_CountingFileSystemProbe_deleteEnv(JNIEnv*, jclass, jlong env) {
  delete reinterpret_cast<Env*>(env);
}

// Files opened for random access, reads served, bytes read.
JNIEXPORT jlongArray JNICALL Java_CountingFileSystemProbe_counts(JNIEnv* jni, jclass) {
  jlong counts[3] = {files_opened.load(), reads.load(), bytes_read.load()};
  jlongArray array = jni->NewLongArray(3);
  if (array != nullptr) jni->SetLongArrayRegion(array, 0, 3, counts);
  return array;
}
}
