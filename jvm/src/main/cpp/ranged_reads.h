// Ranged reads of remote files through Java (io/ttlstore/store/lazyfs/RangedReads.java), for LazyFileSystem.
#ifndef TTLSTORE_RANGED_READS_H
#define TTLSTORE_RANGED_READS_H

#include <jni.h>

#include <memory>
#include <string>

#include <rocksdb/io_status.h>

namespace ttlstore {

// A Java RangedReads, called from any thread: RocksDB's own threads are attached to the JVM as daemons on their
// first read and detached when they end, unless the process is exiting: the JVM's exit runs RocksDB's static
// destructors, which join its background threads, and a thread that detaches then waits for the JVM forever.
// The first reader registers the exit mark after RocksDB's default Env exists, so that it runs before that Env's
// destructor.
class RangedReads {
 public:
  // The reader for `reads` (a Java RangedReads), or null with a Java exception pending.
  static std::shared_ptr<const RangedReads> Of(JNIEnv* env, jobject reads);

  RangedReads(jobject reads, jmethodID read) : reads_(reads), read_(read) {}
  ~RangedReads();
  RangedReads(const RangedReads&) = delete;
  RangedReads& operator=(const RangedReads&) = delete;

  // Up to n bytes of remote file `file` (the local `path` it stands for, for messages) from `offset` into scratch;
  // fewer only at the file's end. A Java exception becomes an IOError naming the path and the exception.
  ROCKSDB_NAMESPACE::IOStatus Read(jlong file, const std::string& path, uint64_t offset, size_t n, char* scratch,
                                   size_t* got) const;

 private:
  jobject reads_;   // a global reference, released by the destructor
  jmethodID read_;  // int read(long file, long position, ByteBuffer into)
};

}  // namespace ttlstore

#endif
