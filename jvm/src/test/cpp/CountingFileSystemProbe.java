// Opens, writes, flushes, reads, compacts and closes a RocksDB whose Env's file system is
// counting_file_system.cc's, on the rocksdbjni of the class path (a Spark line's), and prints what it
// saw as one line `RESULT {json}` for prove_file_system.py. Run as a single-file program:
// java -cp <rocksdbjni jar> CountingFileSystemProbe.java <directory of the two libraries> <keys>
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.rocksdb.AbstractImmutableNativeReference;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksEnv;

public class CountingFileSystemProbe {
  static native String makeRocksdbjniGlobal();

  static native long newEnv();

  static native void deleteEnv(long env);

  static native long[] counts();

  /** The files mapped into this process whose path contains `part`. */
  static Set<String> mapped(String part) throws Exception {
    Set<String> files = new TreeSet<>();
    for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      int slash = line.indexOf('/');
      if (slash >= 0 && line.substring(slash).contains(part)) files.add(line.substring(slash));
    }
    return files;
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    Path libraries = Paths.get(args[0]);
    int keys = Integer.parseInt(args[1]);
    RocksDB.loadLibrary();
    System.load(libraries.resolve("libload_rocksdb_file_system.so").toString());
    String rocksdbjni = makeRocksdbjniGlobal();
    System.load(libraries.resolve("libcounting_file_system.so").toString());
    long handle = newEnv();
    // RocksJava's Env(long) constructors are package-private; the unnamed module lets reflection in.
    Constructor<RocksEnv> constructor = RocksEnv.class.getDeclaredConstructor(long.class);
    constructor.setAccessible(true);
    RocksEnv env = constructor.newInstance(handle);
    Path dir = Files.createTempDirectory("counting-fs");
    long[] opened, read, compacted;
    int found = 0, latest = 0;
    String level0;
    try (Options options = new Options().setCreateIfMissing(true).setEnv(env).setMaxOpenFiles(-1)
            // The four flushed files stay in level 0 until compactRange, which then reads them all.
            .setDisableAutoCompactions(true);
        FlushOptions flush = new FlushOptions().setWaitForFlush(true);
        RocksDB db = RocksDB.open(options, dir.toString())) {
      for (int round = 0; round < 4; round++) {
        for (int i = 0; i < keys; i++) db.put(bytes("k" + (i * 7919L % keys)), bytes("v" + round));
        db.flush(flush);
      }
      opened = counts();
      for (int i = 0; i < keys; i++) if (db.get(bytes("k" + i)) != null) found++;
      read = counts();
      db.compactRange();
      compacted = counts();
      level0 = db.getProperty("rocksdb.num-files-at-level0");
      for (int i = 0; i < keys; i++) {
        byte[] value = db.get(bytes("k" + i));
        if (value != null && new String(value, StandardCharsets.UTF_8).equals("v3")) latest++;
      }
    }
    // RocksEnv's own close frees nothing on 9.8.4 (its JNI method is missing): the Env is ours to free.
    Method disown = AbstractImmutableNativeReference.class.getDeclaredMethod("disOwnNativeHandle");
    disown.setAccessible(true);
    disown.invoke(env);
    env.close();
    deleteEnv(handle);
    try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) Files.delete(f);
    }
    System.out.println("RESULT {\"rocksdbjni\": \"" + rocksdbjni + "\", \"rocksdbMapped\": " + mapped("librocksdb").size()
        + ", \"keys\": " + keys + ", \"found\": " + found + ", \"latestAfterCompaction\": " + latest
        + ", \"level0AfterCompaction\": " + level0 + ", \"afterFlushes\": " + Arrays.toString(opened)
        + ", \"afterReads\": " + Arrays.toString(read) + ", \"afterCompaction\": " + Arrays.toString(compacted)
        + ", \"sanitizers\": " + (mapped("libasan").size() + mapped("libubsan").size()) + "}");
  }
}
