package io.ttlstore.fuzz

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, File}
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.util.concurrent.{Executors, TimeoutException}
import java.util.zip.{ZipEntry, ZipInputStream, ZipOutputStream}

import scala.collection.mutable
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.commons.io.FileUtils
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.StoreFixtures._
import io.ttlstore.checkpoint.Compression
import io.ttlstore.errors.TtlStoreException

/**
 * Every file format ttlstore parses, damaged the way a fuzzer damages files ([[Mutations]]) and
 * loaded by a fresh ttlstore provider, as a restarted query loads it: ttlstore's changelog, snapshot
 * zip, manifest with its TTL record, adoption record, and the files of Spark's HDFS provider
 * (`.delta`, `.snapshot`) and RocksDB provider (`.changelog`, `.zip`) that an adoption reads.
 *
 * Each input must either load or fail with a [[TtlStoreException]]; never another exception, a
 * hang, or a huge allocation (a damaged length field taken at its word). A file of ttlstore's own
 * that loads must give exactly the state it held (its formats carry checksums). Spark's formats
 * carry none, so a changed byte there can read as a changed row: a Spark file that loads must give
 * the state it held or, where it does not, exactly the state Spark's own provider reads from the
 * same damaged checkpoint (damage no reader of that format can see); a state Spark's provider
 * refuses or reads otherwise fails the test.
 *
 * `TTLSTORE_FUZZ_INPUTS` sets the inputs per file kind (`make chaos` runs many);
 * `TTLSTORE_FUZZ_REPORT` names a JSON file for the outcomes.
 */
class ReaderFuzzSuite extends AnyFunSuite with BeforeAndAfterAll {
  import ReaderFuzzSuite.{FileKind, Part, SparkProvider, Ttlstore}

  private val Inputs = sys.env.get("TTLSTORE_FUZZ_INPUTS").map(_.toInt).getOrElse(100)
  private val Seed = 20261123L
  private val Timeout = 60.seconds

  /** Far more than loading these small stores takes (a few MiB), far less than a length field's 1-2 GiB. */
  private val AllocationLimit = 256L << 20

  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /**
   * Without Spark's autoSnapshotRepair, which would build a version around a damaged snapshot from
   * the changelogs and so never show the snapshot's reader the damage.
   */
  private val ttlConf = Seq("spark.sql.streaming.stateStore.ttlstore.ttl" -> "1 day",
    "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled" -> "false")

  /** The outcome of a Spark file whose damage changed rows as Spark's own provider reads them too. */
  private val AsSparkReadsIt = "loaded changed"

  private val executor = Executors.newSingleThreadExecutor()
  private implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(executor)

  /** Spark's own loads run apart, so that one that hangs fails its input and not the ones after it. */
  private val sparkExecutor = Executors.newCachedThreadPool()
  private val outcomes = mutable.LinkedHashMap.empty[String, mutable.Map[String, Int]]

  override def afterAll(): Unit = {
    executor.shutdownNow()
    sparkExecutor.shutdownNow()
    sys.env.get("TTLSTORE_FUZZ_REPORT").foreach { path =>
      val kinds = outcomes.map { case (kind, counts) =>
        val inner = counts.toSeq.sortBy(-_._2).map { case (k, n) => s""""$k": $n""" }.mkString(", ")
        s"""  "$kind": {$inner}"""
      }
      Files.writeString(new File(path).toPath, s"{\n${kinds.mkString(",\n")}\n}\n")
    }
  }

  private def store(dir: File) = new File(dir, "0/0")
  private def ttlstoreDir(dir: File) = new File(store(dir), "ttlstore")

  private def writeVersions(provider: String, dir: File, versions: Int, conf: Seq[(String, String)],
      maintainAfter: Set[Int] = Set.empty): Unit =
    withProvider(newProvider(provider, dir, storeConf(conf: _*))) { p =>
      (0 until versions).foreach { v =>
        val changes = (0 until 30).map(i => (s"user${(v * 7 + i) % 41}", i % 3) -> Some(v * 100L + i)) ++
          (0 until 5).map(i => (s"user${(v * 5 + i) % 41}", i % 3) -> None)
        commitVersion(p, v, changes: _*)
        if (maintainAfter.contains(v + 1)) p.doMaintenance()
      }
    }

  /** Spark's HDFS provider's versions 1-4, then ttlstore adopting 4 and committing 5. */
  private def adopted(dir: File): Unit = {
    writeVersions(HdfsProvider, dir, 4, Nil)
    withProvider(newProvider(TtlProvider, dir, storeConf(ttlConf: _*)))(p =>
      commitVersion(p, 4, ("new", 0) -> Some(1L)))
  }

  private def only(dir: File, suffix: String): File = {
    val found =
      Option(dir.listFiles()).getOrElse(Array.empty[File]).filter(_.getName.endsWith(suffix)).sortBy(_.getName)
    assert(found.nonEmpty, s"no $suffix file in $dir: the sample checkpoint is not what this kind needs")
    found.maxBy(_.getName.takeWhile(_.isDigit).toLong)
  }

  /** A zip's entry `entry` is what is damaged; the zip is written around it again. */
  private def zipEntry(entry: String) = Part(
    zip => zipEntries(zip).toMap.apply(entry),
    (zip, damaged) => {
      val out = new ByteArrayOutputStream()
      val z = new ZipOutputStream(out)
      zipEntries(zip).foreach { case (name, bytes) =>
        z.putNextEntry(new ZipEntry(name))
        z.write(if (name == entry) damaged else bytes)
        z.closeEntry()
      }
      z.close()
      out.toByteArray
    })

  /**
   * A compressed record file is damaged inside its compression, where a length field is read as a
   * length: `header` bytes stay, the rest is decompressed with `codec`, and compressed again around
   * the damaged records.
   */
  private def records(header: Array[Byte] => Int, codec: Array[Byte] => String) = Part(
    file => {
      val h = header(file)
      Compression.codec(codec(file)).compressedInputStream(new ByteArrayInputStream(file, h, file.length - h))
        .readAllBytes()
    },
    (file, damaged) => {
      val out = new ByteArrayOutputStream()
      out.write(file, 0, header(file))
      val z = Compression.codec(codec(file)).compressedOutputStream(out)
      z.write(damaged)
      z.close()
      out.toByteArray
    })

  /** ttlstore's changelog header: magic, format, the codec name's length and the name. */
  private val changelogHeader = (b: Array[Byte]) => 6 + b(5)
  private val changelogCodec = (b: Array[Byte]) => new String(b, 6, b(5), "US-ASCII")
  private val sparkRecords = records(_ => 0, _ => "lz4")
  private val ttlstoreRecords = records(changelogHeader, changelogCodec)

  private def zipEntries(bytes: Array[Byte]): Seq[(String, Array[Byte])] = {
    val in = new ZipInputStream(new ByteArrayInputStream(bytes))
    Iterator.continually(in.getNextEntry).takeWhile(_ != null).map(e => e.getName -> in.readAllBytes()).toSeq
  }

  private val kinds: Seq[FileKind] = {
    val snapshotted = (dir: File) => writeVersions(TtlProvider, dir, 3, ttlConf, maintainAfter = Set(3))
    val snapshotZip = (dir: File) => only(ttlstoreDir(dir), ".snapshot")
    val hdfs = SparkProvider(HdfsProvider, Nil)
    val rocksDb = SparkProvider(RocksDbProvider, Nil)
    val rocksDbChangelog =
      SparkProvider(RocksDbProvider,
        Seq("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled" -> "true"))
    def written(by: SparkProvider, maintainAfter: Set[Int] = Set.empty) =
      (dir: File) => writeVersions(by.className, dir, 4, by.conf, maintainAfter)
    Seq(
      FileKind("ttlstore changelog", dir => writeVersions(TtlProvider, dir, 4, ttlConf),
        dir => new File(ttlstoreDir(dir), "4.changelog"), version = 4, Ttlstore),
      FileKind("ttlstore snapshot", snapshotted, snapshotZip, version = 3, Ttlstore),
      FileKind("ttlstore changelog, inside its compression", dir => writeVersions(TtlProvider, dir, 4, ttlConf),
        dir => new File(ttlstoreDir(dir), "4.changelog"), version = 4, Ttlstore, ttlstoreRecords),
      FileKind("ttlstore snapshot manifest and TTL record", snapshotted, snapshotZip, version = 3, Ttlstore,
        zipEntry("manifest.json")),
      FileKind("ttlstore adoption record", adopted, dir => new File(ttlstoreDir(dir), "adopted.json"), version = 5,
        Ttlstore),
      FileKind("Spark HDFS .delta", written(hdfs), dir => only(store(dir), ".delta"), version = 4, hdfs),
      FileKind("Spark HDFS .snapshot", written(hdfs, maintainAfter = Set(4)), dir => only(store(dir), ".snapshot"),
        version = 4, hdfs),
      FileKind("Spark RocksDB .changelog", written(rocksDbChangelog, maintainAfter = Set(2)),
        dir => only(store(dir), ".changelog"), version = 4, rocksDbChangelog),
      FileKind("Spark HDFS .delta, inside its compression", written(hdfs), dir => only(store(dir), ".delta"),
        version = 4, hdfs, sparkRecords),
      FileKind("Spark RocksDB .changelog, inside its compression", written(rocksDbChangelog, maintainAfter = Set(2)),
        dir => only(store(dir), ".changelog"), version = 4, rocksDbChangelog, sparkRecords),
      FileKind("Spark RocksDB .zip", written(rocksDb), dir => only(store(dir), ".zip"), version = 4, rocksDb),
      FileKind("Spark RocksDB .zip metadata", written(rocksDb), dir => only(store(dir), ".zip"), version = 4, rocksDb,
        zipEntry("metadata")))
  }

  /**
   * What a fresh provider of `className` loads at `version`: the rows' bytes (not decoded: a damaged
   * file of Spark's may load rows that are not rows of this schema), or the exception.
   */
  private def load(dir: File, version: Long, className: String = TtlProvider,
      conf: Seq[(String, String)] = ttlConf): Either[Throwable, Map[Seq[Byte], Seq[Byte]]] =
    try Right(withProvider(newProvider(className, dir, storeConf(conf: _*))) { p =>
        val s = p.getStore(version)
        try s.iterator().map(pair => pair.key.getBytes.toSeq -> pair.value.getBytes.toSeq).toMap
        finally s.abort()
      })
    catch { case e: Throwable => Left(e) }

  /**
   * What Spark's own provider reads from the damaged checkpoint in `dir`, on a copy of it (its loads
   * may leave files beside the ones they read), within the suite's time limit.
   */
  private def sparkReads(dir: File, version: Long, by: SparkProvider): Either[Throwable, Map[Seq[Byte], Seq[Byte]]] =
    withTempDir { copy =>
      FileUtils.copyDirectory(dir, copy)
      val run = Future(load(copy, version, by.className, by.conf))(ExecutionContext.fromExecutor(sparkExecutor))
      try Await.result(run, Timeout)
      catch { case e: TimeoutException => Left(e) }
    }

  /** The checkpoint's files, by path below `dir`. */
  private def listing(dir: File): Set[String] =
    FileUtils.listFiles(dir, null, true).asScala.map(f => dir.toPath.relativize(f.toPath).toString).toSet

  private def allocatedBytes(): Long =
    ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean].getCurrentThreadAllocatedBytes

  for (kind <- kinds) {
    val loads = kind.origin match {
      case Ttlstore => "loads as it was"
      case _: SparkProvider => "loads as it was or as Spark's own provider reads it"
    }
    test(s"a damaged ${kind.name} $loads or fails with a named error, never hangs or runs out of memory") {
      withTempDir { dir =>
        kind.write(dir)
        val target = kind.file(dir)
        val pristine = FileUtils.readFileToByteArray(target)
        val expected =
          load(dir, kind.version).fold(e => fail(s"the undamaged checkpoint does not load: $e", e), identity)
        assert(expected.nonEmpty)
        val original = kind.part.of(pristine)
        val files = listing(dir)
        val counts = outcomes.getOrElseUpdate(kind.name, mutable.LinkedHashMap.empty[String, Int])
        val failures = mutable.Buffer.empty[String]
        val examples = mutable.Buffer.empty[String]
        (0 until Inputs).foreach { n =>
          val input = Mutations.input(original, Seed + kind.name.hashCode, n)
          FileUtils.writeByteArrayToFile(target, kind.part.rebuild(pristine, input.bytes))
          val run = Future {
            val before = allocatedBytes()
            val result = load(dir, kind.version)
            (result, allocatedBytes() - before)
          }
          val outcome =
            try Await.result(run, Timeout)
            catch { case _: TimeoutException => fail(s"input $n (${input.what}) hung for $Timeout") }
          if (listing(dir) != files) {
            fail(s"input $n (${input.what}): a load that was aborted changed the checkpoint's files: " +
              s"${listing(dir).diff(files)} appeared, ${files.diff(listing(dir))} went")
          }
          outcome match {
            case (_, allocated) if allocated > AllocationLimit =>
              failures += s"input $n (${input.what}): allocated ${allocated >> 20} MiB"
            case (Left(e: TtlStoreException), _) =>
              if (!counts.contains(e.errorName)) examples += s"${e.getMessage}; cause: ${e.getCause}"
              counts(e.errorName) = counts.getOrElse(e.errorName, 0) + 1
            case (Left(e), _) =>
              failures += s"input $n (${input.what}): ${e.getClass.getName}: ${e.getMessage}"
            case (Right(state), _) if state == expected =>
              counts("loaded") = counts.getOrElse("loaded", 0) + 1
            case (Right(state), _) =>
              kind.origin match {
                case Ttlstore => failures += s"input $n (${input.what}): loaded a different state"
                case spark: SparkProvider =>
                  sparkReads(dir, kind.version, spark) match {
                    case Right(sparks) if sparks == state =>
                      counts(AsSparkReadsIt) = counts.getOrElse(AsSparkReadsIt, 0) + 1
                    case Right(_) =>
                      failures += s"input $n (${input.what}): loaded a state Spark's own provider reads otherwise"
                    case Left(e) =>
                      failures += s"input $n (${input.what}): loaded a changed state that Spark's own provider " +
                        s"refuses (${e.getClass.getName}: ${e.getMessage})"
                  }
              }
          }
        }
        FileUtils.writeByteArrayToFile(target, pristine)
        assert(load(dir, kind.version) === Right(expected), "the undamaged file loads again")
        assert(failures.isEmpty, failures.take(10).mkString("\n"))
        assert(counts.keySet.exists(_ != "loaded"),
          s"no input was refused: the damage never reached the reader ($counts)")
        examples.foreach(e => info(e.take(600)))
        info(s"${kind.name}: $Inputs inputs: ${counts.toSeq.sortBy(-_._2).map { case (k, v) => s"$k $v" }.mkString(", ")}")
      }
    }
  }
}

object ReaderFuzzSuite {

  /**
   * One kind of file: how to write a checkpoint holding it, which file it is, which version loads
   * it, who wrote it, and which part of it is damaged.
   */
  final case class FileKind(
      name: String, write: File => Unit, file: File => File, version: Long, origin: Origin, part: Part = WholeFile)

  /**
   * Who wrote a kind of file: ttlstore (checksummed: a load gives the state it held), or one of
   * Spark's providers with the settings it wrote with (no checksum: a load gives the state that
   * provider itself reads).
   */
  sealed trait Origin
  case object Ttlstore extends Origin
  final case class SparkProvider(className: String, conf: Seq[(String, String)]) extends Origin

  /** What of a file is damaged (`of` its bytes), and the file rebuilt around the damaged part. */
  final case class Part(of: Array[Byte] => Array[Byte], rebuild: (Array[Byte], Array[Byte]) => Array[Byte])

  val WholeFile: Part = Part(identity, (_, damaged) => damaged)
}
