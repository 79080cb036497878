package io.ttlstore.store.lazyfs;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import org.rocksdb.AbstractImmutableNativeReference;
import org.rocksdb.RocksEnv;

/**
 * A RocksDB {@code Env} whose file system serves registered SST files from their remote copy, by ranged reads through
 * a {@link RangedReads}, until each is marked local (jvm/src/main/cpp/lazy_file_system.cc). Every other file is
 * RocksDB's default file system's.
 *
 * <p>The native library must be loaded first ({@link #load}). Close
 * this after every DB that uses its {@link #rocksEnv()}.
 */
public final class LazyFileSystem implements AutoCloseable {
  private static native long create(RangedReads reads, boolean remoteMode);

  private static native long env(long handle);

  private static native void serveRemotely(long handle, String path, long size, long file);

  private static native boolean markLocal(long handle, String path);

  private static native boolean demote(long handle, String path, long size, long file);

  private static native long lastRead(long handle, String path);

  private static native long[] counts(long handle);

  private static native void destroy(long handle);

  private static native String makeRocksdbjniGlobal();

  /**
   * Loads libttlstore_lazy_fs from {@code library} for this class's loader (a JNI library serves the class loader
   * that loaded it), its RocksDB symbols bound to the librocksdbjni the JVM has. libttlstore_filter (which makes
   * that copy's symbols global) must be loaded in the same class loader first.
   *
   * @return the path of the librocksdbjni the library binds to
   */
  public static synchronized String load(String library) {
    String rocksdbjni = makeRocksdbjniGlobal();
    System.load(library);
    return rocksdbjni;
  }

  /** What a DB checkpoint holds in place of a remote file (lazy_file_system.h's kRemoteMarker). */
  public static final String REMOTE_MARKER = "ttlstore: this SST file is in the checkpoint, not on local disk\n";

  private long handle;
  private final RocksEnv rocksEnv;

  public LazyFileSystem(RangedReads reads) {
    this(reads, false);
  }

  /**
   * In remote mode (state larger than the local disk) every SST file RocksDB opens is tracked, so that a local one
   * whose copy is in the checkpoint can be {@linkplain #demote demoted}, and a checkpoint of the DB holds a marker
   * ({@link #REMOTE_MARKER}) in place of each remote file.
   */
  public LazyFileSystem(RangedReads reads, boolean remoteMode) {
    handle = create(reads, remoteMode);
    if (handle == 0) throw new IllegalStateException("the lazy file system could not be created");
    rocksEnv = wrap(env(handle));
  }

  /** RocksJava's Env for {@code DBOptions.setEnv}; it does not own the native Env, which {@link #close()} frees. */
  public RocksEnv rocksEnv() {
    return rocksEnv;
  }

  /** From now on, the file at {@code path} (in a DB directory) exists with {@code size} bytes, read remotely. */
  public synchronized void serveRemotely(String path, long size, long file) {
    serveRemotely(live(), path, size, file);
  }

  /**
   * The file at {@code path} is local now, complete and checked: every reader reads it locally from its next read.
   *
   * @return false when RocksDB deleted the file meanwhile (the local copy is then no one's)
   */
  public synchronized boolean markLocal(String path) {
    return markLocal(live(), path);
  }

  /**
   * The file {@code placed} has just come down whole and checked under its local name: {@link #markLocal marked}
   * local, or deleted again when RocksDB deleted the file meanwhile (the copy is then no one's).
   */
  public void place(java.io.File placed) {
    if (!markLocal(placed.getAbsolutePath())) placed.delete();
  }

  /**
   * Remote mode: the local file at {@code path}, whose complete copy {@code file} of {@code size} bytes is in the
   * checkpoint, is read remotely from every reader's next read; the caller then deletes it (a read under way keeps
   * the open file until it returns).
   *
   * @return false when RocksDB has no such file (deleted meanwhile): nothing changed
   */
  public synchronized boolean demote(String path, long size, long file) {
    return demote(live(), path, size, file);
  }

  /**
   * Remote mode: when the file at {@code path}, local or remote, was last read (a tick, larger later; 0: never); -1
   * when RocksDB has no such file open (never opened, or deleted since).
   */
  public synchronized long lastRead(String path) {
    return lastRead(live(), path);
  }

  /** What it did so far. */
  public synchronized Counts counts() {
    long[] c = counts(live());
    return new Counts(c[0], c[1], c[2], c[3], c[4]);
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      destroy(handle);
      handle = 0;
    }
  }

  /** The native handle; a call after {@link #close()} fails here rather than in freed memory. */
  private long live() {
    if (handle == 0) throw new IllegalStateException("the lazy file system is closed");
    return handle;
  }

  /**
   * RocksJava's {@code RocksEnv(long)} is package-private (8.3.2 and 9.8.4); reflection reaches it from any class
   * loader. The RocksEnv is disowned at once: 9.8.4's {@code RocksEnv.close()} would call a JNI method its library
   * lacks, and the Env is this object's to free.
   */
  private static RocksEnv wrap(long env) {
    try {
      Constructor<RocksEnv> constructor = RocksEnv.class.getDeclaredConstructor(long.class);
      constructor.setAccessible(true);
      RocksEnv rocksEnv = constructor.newInstance(env);
      Method disown = AbstractImmutableNativeReference.class.getDeclaredMethod("disOwnNativeHandle");
      disown.setAccessible(true);
      disown.invoke(rocksEnv);
      return rocksEnv;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("RocksJava's RocksEnv(long) is not reachable on this rocksdbjni", e);
    }
  }

  /**
   * Remote files still registered, remote files opened, ranged reads served, the bytes they read, and reads of files
   * opened remotely that were served locally after their switch. (A class, not a record: Scala 2.12's Scaladoc,
   * which the Maven artifact of Spark 3.5 with Scala 2.12 carries, cannot parse records.)
   */
  public static final class Counts {
    private final long remoteFiles, remoteOpens, rangedReads, rangedBytes, switchedReads;

    Counts(long remoteFiles, long remoteOpens, long rangedReads, long rangedBytes, long switchedReads) {
      this.remoteFiles = remoteFiles;
      this.remoteOpens = remoteOpens;
      this.rangedReads = rangedReads;
      this.rangedBytes = rangedBytes;
      this.switchedReads = switchedReads;
    }

    public long remoteFiles() { return remoteFiles; }

    public long remoteOpens() { return remoteOpens; }

    public long rangedReads() { return rangedReads; }

    public long rangedBytes() { return rangedBytes; }

    public long switchedReads() { return switchedReads; }
  }
}
