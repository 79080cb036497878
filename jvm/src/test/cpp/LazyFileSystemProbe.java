// Opens RocksDBs whose SST files are only in another directory (standing for the checkpoint) through
// io.ttlstore.store.lazyfs.LazyFileSystem on the rocksdbjni of the class path (a Spark line's), and prints what it saw
// as one line `RESULT {json}` for prove_file_system.py. Compiled with io.ttlstore.store.lazyfs's classes into one
// directory, so that it loads the native libraries into their class loader, as the product's loader does:
// java -cp <rocksdbjni jar>:<classes> LazyFileSystemProbe <directory of the libraries> <keys>
import io.ttlstore.store.lazyfs.LazyFileSystem;
import io.ttlstore.store.lazyfs.RangedReads;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

public class LazyFileSystemProbe {
  static final Map<String, Object> result = new LinkedHashMap<>();
  static int keys;

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static List<Path> sstFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.toString().endsWith(".sst")).sorted().collect(Collectors.toList());
    }
  }

  /** Reads the remote copies (a directory here) by file number; `failing` names a file whose reads throw. */
  static final class DirectoryReads implements RangedReads {
    final List<Path> files; // grows in remote mode: a CopyOnWriteArrayList
    volatile Path failing;

    DirectoryReads(List<Path> files) {
      this.files = files;
    }

    @Override
    public int read(long file, long position, ByteBuffer into) throws IOException {
      Path path = files.get((int) file);
      if (path.equals(failing)) throw new IOException("the object store reset the connection reading " + path);
      int total = 0;
      try (FileChannel channel = FileChannel.open(path)) {
        while (into.hasRemaining()) {
          int n = channel.read(into, position + total);
          if (n < 0) break;
          total += n;
        }
      }
      return total;
    }
  }

  /** Every SST of `remote` served lazily to a DB in `local`, which gets every other file of `remote`. */
  static LazyFileSystem lazy(Path remote, Path local, DirectoryReads reads) throws IOException {
    Files.createDirectories(local);
    try (Stream<Path> files = Files.list(remote)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        String name = f.getFileName().toString();
        if (!name.endsWith(".sst") && !name.startsWith("LOG")) Files.copy(f, local.resolve(name));
      }
    }
    LazyFileSystem fs = new LazyFileSystem(reads);
    for (int i = 0; i < reads.files.size(); i++) {
      Path f = reads.files.get(i);
      fs.serveRemotely(local.resolve(f.getFileName()).toString(), Files.size(f), i);
    }
    return fs;
  }

  static Options options() {
    // No block cache: every read of a block reaches the file system, so the switch to local is seen.
    return new Options().setCreateIfMissing(true).setMaxOpenFiles(-1).setDisableAutoCompactions(true)
        .setTableFormatConfig(new BlockBasedTableConfig().setNoBlockCache(true));
  }

  /** Keys whose value is `value`. */
  static int matching(RocksDB db, String value) throws RocksDBException {
    int n = 0;
    for (int i = 0; i < keys; i++) {
      byte[] v = db.get(bytes("k" + i));
      if (v != null && new String(v, StandardCharsets.UTF_8).equals(value)) n++;
    }
    return n;
  }

  static List<Long> counts(LazyFileSystem fs) {
    LazyFileSystem.Counts c = fs.counts();
    return List.of(c.remoteFiles(), c.remoteOpens(), c.rangedReads(), c.rangedBytes(), c.switchedReads());
  }

  static String failure(RocksDB db) {
    try {
      matching(db, "v3");
      return "";
    } catch (RocksDBException e) {
      return e.getMessage();
    }
  }

  public static void main(String[] args) throws Exception {
    Path libraries = Paths.get(args[0]);
    keys = Integer.parseInt(args[1]);
    RocksDB.loadLibrary();
    System.load(libraries.resolve("libttlstore_filter.so").toString());
    result.put("rocksdbjni", LazyFileSystem.load(libraries.resolve("libttlstore_lazy_fs.so").toString()));
    Path work = Files.createTempDirectory("lazy-fs");
    Path remote = work.resolve("checkpoint");
    try (Options options = options(); FlushOptions flush = new FlushOptions().setWaitForFlush(true);
        RocksDB db = RocksDB.open(options, remote.toString())) {
      for (int round = 0; round < 4; round++) {
        for (int i = 0; i < keys; i++) db.put(bytes("k" + (i * 7919L % keys)), bytes("v" + round));
        db.flush(flush);
      }
    }
    List<Path> ssts = sstFiles(remote);
    result.put("sstFiles", ssts.size());
    hydrateWhileReading(remote, work.resolve("hydrated"), ssts);
    compactWithoutHydrating(remote, work.resolve("compacted"), ssts);
    damaged(remote, work.resolve("damaged"), ssts);
    failingReads(remote, work.resolve("failing"), ssts);
    remoteMode(work.resolve("remote-mode"), work.resolve("remote-mode-checkpoint"));
    result.put("rocksdbMapped", mapped("librocksdb"));
    result.put("sanitizers", mapped("libasan") + mapped("libubsan"));
    try (Stream<Path> files = Files.walk(work)) {
      for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) Files.delete(f);
    }
    System.out.println("RESULT " + json(result));
  }

  /** Opens lazily, reads, brings every file down while another thread reads, reads locally, compacts. */
  static void hydrateWhileReading(Path remote, Path local, List<Path> ssts) throws Exception {
    DirectoryReads reads = new DirectoryReads(ssts);
    try (LazyFileSystem fs = lazy(remote, local, reads)) {
      try (Options options = options().setEnv(fs.rocksEnv()); RocksDB db = RocksDB.open(options, local.toString())) {
        result.put("lazyOpen", counts(fs));
        result.put("localSstAtOpen", sstFiles(local).size());
        result.put("latestRemotely", matching(db, "v3"));
        result.put("afterRemoteReads", counts(fs));
        AtomicReference<Exception> readerFailed = new AtomicReference<>();
        int[] during = {0};
        Thread reader = new Thread(() -> {
          try {
            during[0] = matching(db, "v3");
          } catch (Exception e) {
            readerFailed.set(e);
          }
        });
        reader.start();
        List<Boolean> marked = new ArrayList<>();
        for (Path f : ssts) {
          Path partial = local.resolve(f.getFileName() + ".hydrating");
          Files.copy(f, partial);
          Files.move(partial, local.resolve(f.getFileName()), StandardCopyOption.ATOMIC_MOVE);
          marked.add(fs.markLocal(local.resolve(f.getFileName()).toString()));
        }
        reader.join();
        if (readerFailed.get() != null) throw readerFailed.get();
        result.put("latestDuringHydration", during[0]);
        result.put("markedLocal", marked.stream().filter(b -> b).count());
        List<Long> hydrated = counts(fs);
        result.put("latestLocally", matching(db, "v3"));
        List<Long> after = counts(fs);
        result.put("rangedReadsAfterHydration", after.get(2) - hydrated.get(2));
        result.put("switchedReadsAfterHydration", after.get(4) - hydrated.get(4));
        db.compactRange();
        result.put("level0AfterCompaction", Long.parseLong(db.getProperty("rocksdb.num-files-at-level0")));
        result.put("latestAfterCompaction", matching(db, "v3"));
      }
    }
  }

  /** Compacts a lazily opened DB before any file is local: its inputs are read remotely, then deleted by RocksDB. */
  static void compactWithoutHydrating(Path remote, Path local, List<Path> ssts) throws Exception {
    try (LazyFileSystem fs = lazy(remote, local, new DirectoryReads(ssts))) {
      try (Options options = options().setEnv(fs.rocksEnv()); RocksDB db = RocksDB.open(options, local.toString())) {
        db.compactRange();
        result.put("remoteAfterUnhydratedCompaction", counts(fs).get(0));
        result.put("latestAfterUnhydratedCompaction", matching(db, "v3"));
        result.put("localSstAfterUnhydratedCompaction", sstFiles(local).size());
      }
    }
    result.put("checkpointSstIntact", sstFiles(remote).equals(ssts));
  }

  /** A byte flipped in the newest remote copy (every key's latest value is there): a read fails naming the file. */
  static void damaged(Path remote, Path local, List<Path> ssts) throws Exception {
    Path copies = local.resolveSibling("damaged-checkpoint");
    Files.createDirectories(copies);
    List<Path> damaged = new ArrayList<>();
    for (Path f : ssts) damaged.add(Files.copy(f, copies.resolve(f.getFileName())));
    Path newest = damaged.get(damaged.size() - 1);
    byte[] content = Files.readAllBytes(newest);
    content[content.length / 3] ^= 0x5a;
    Files.write(newest, content);
    try (LazyFileSystem fs = lazy(remote, local, new DirectoryReads(damaged));
        Options options = options().setEnv(fs.rocksEnv()); RocksDB db = RocksDB.open(options, local.toString())) {
      result.put("damagedFile", newest.getFileName().toString());
      result.put("damagedRead", failure(db));
    }
  }

  /** Reads of one remote copy throw after the open: a read of it fails with that error and the file's name. */
  static void failingReads(Path remote, Path local, List<Path> ssts) throws Exception {
    DirectoryReads reads = new DirectoryReads(ssts);
    try (LazyFileSystem fs = lazy(remote, local, reads);
        Options options = options().setEnv(fs.rocksEnv()); RocksDB db = RocksDB.open(options, local.toString())) {
      reads.failing = ssts.get(ssts.size() - 1);
      result.put("failingFile", ssts.get(ssts.size() - 1).getFileName().toString());
      result.put("failingRead", failure(db));
    }
  }

  /**
   * Remote mode: a DB writes its files locally; each is copied to the checkpoint and demoted while another thread
   * reads, then deleted; the DB reads them remotely, a checkpoint of it holds markers for them, and it compacts its
   * remote files into local ones.
   */
  static void remoteMode(Path local, Path checkpoint) throws Exception {
    Files.createDirectories(checkpoint);
    DirectoryReads reads = new DirectoryReads(new java.util.concurrent.CopyOnWriteArrayList<>());
    try (LazyFileSystem fs = new LazyFileSystem(reads, true);
        Options options = options().setEnv(fs.rocksEnv());
        FlushOptions flush = new FlushOptions().setWaitForFlush(true);
        RocksDB db = RocksDB.open(options, local.toString())) {
      for (int round = 0; round < 4; round++) {
        for (int i = 0; i < keys; i++) db.put(bytes("k" + (i * 7919L % keys)), bytes("v" + round));
        db.flush(flush);
      }
      AtomicReference<Exception> readerFailed = new AtomicReference<>();
      int[] during = {0};
      Thread reader = new Thread(() -> {
        try {
          for (int pass = 0; pass < 3; pass++) during[0] += matching(db, "v3");
        } catch (Exception e) {
          readerFailed.set(e);
        }
      });
      reader.start();
      int demoted = 0;
      for (Path f : sstFiles(local)) {
        Path copy = Files.copy(f, checkpoint.resolve(f.getFileName()));
        reads.files.add(copy);
        if (fs.demote(f.toString(), Files.size(copy), reads.files.size() - 1)) {
          Files.delete(f);
          demoted++;
        }
      }
      reader.join();
      if (readerFailed.get() != null) throw readerFailed.get();
      result.put("remoteModeDemoted", demoted);
      result.put("remoteModeLatestDuringDemotion", during[0]);
      result.put("remoteModeLocalSstAfterDemotion", sstFiles(local).size());
      List<Long> before = counts(fs);
      result.put("remoteModeLatestRemotely", matching(db, "v3"));
      result.put("remoteModeRangedReads", counts(fs).get(2) - before.get(2));
      result.put("remoteModeDemoteMissing", fs.demote(local.resolve("999999.sst").toString(), 1, 0));
      Path snapshot = local.resolveSibling("remote-mode-snapshot");
      try (org.rocksdb.Checkpoint c = org.rocksdb.Checkpoint.create(db)) {
        c.createCheckpoint(snapshot.toString());
      }
      int markers = 0;
      for (Path f : sstFiles(snapshot)) {
        markers += new String(Files.readAllBytes(f), StandardCharsets.UTF_8).equals(LazyFileSystem.REMOTE_MARKER) ? 1 : 0;
      }
      result.put("remoteModeMarkers", markers);
      db.compactRange();
      result.put("remoteModeLocalSstAfterCompaction", sstFiles(local).size());
      result.put("remoteModeLatestAfterCompaction", matching(db, "v3"));
    }
    result.put("remoteModeCheckpointIntact", sstFiles(checkpoint).size());
  }

  static int mapped(String part) throws IOException {
    TreeSet<String> files = new TreeSet<>();
    for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      int slash = line.indexOf('/');
      if (slash >= 0 && line.substring(slash).contains(part)) files.add(line.substring(slash));
    }
    return files.size();
  }

  static String json(Object value) {
    if (value instanceof Map<?, ?> map) {
      return map.entrySet().stream().map(e -> json(e.getKey()) + ": " + json(e.getValue()))
          .collect(Collectors.joining(", ", "{", "}"));
    }
    if (value instanceof List<?> list) return list.stream().map(LazyFileSystemProbe::json).collect(Collectors.joining(", ", "[", "]"));
    if (value instanceof String s) return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    return String.valueOf(value);
  }
}
