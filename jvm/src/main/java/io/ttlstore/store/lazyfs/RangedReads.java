package io.ttlstore.store.lazyfs;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads ranges of SST files that are not local yet, for {@link LazyFileSystem}: RocksDB's own threads call it
 * through JNI, concurrently, whenever a block of such a file is not in its block cache.
 */
public interface RangedReads {
  /**
   * Fills {@code into} (from its position to its limit) with the bytes of remote file {@code file} from {@code
   * position} on, stopping early only at the file's end.
   *
   * @return the number of bytes read
   * @throws IOException naming the file, when its copy cannot be read; RocksDB fails the read with that message
   */
  int read(long file, long position, ByteBuffer into) throws IOException;
}
