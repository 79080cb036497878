package io.ttlstore

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.commons.io.{FileUtils, IOUtils}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.LocalAtomicFile

class LocalAtomicFileSuite extends AnyFunSuite {

  private def withDir(body: java.nio.file.Path => Unit): Unit = {
    val dir = Files.createTempDirectory("local-atomic")
    try body(dir)
    finally FileUtils.deleteQuietly(dir.toFile)
  }

  private def names(dir: java.nio.file.Path): Set[String] = dir.toFile.list().toSet

  test("a file appears under its name only when closed, with no checksum or temporary file beside it") {
    withDir { dir =>
      val out = LocalAtomicFile.create(dir.resolve("3.changelog"))
      out.write("abc".getBytes(UTF_8))
      assert(!names(dir).contains("3.changelog"))
      out.close()
      out.close()
      assert(names(dir) == Set("3.changelog"))
      assert(new String(Files.readAllBytes(dir.resolve("3.changelog")), UTF_8) == "abc")
    }
  }

  test("a cancelled file leaves nothing behind, and an earlier file of the name stays as it was") {
    withDir { dir =>
      Files.write(dir.resolve("3.changelog"), "old".getBytes(UTF_8))
      val out = LocalAtomicFile.create(dir.resolve("3.changelog"))
      out.write("new".getBytes(UTF_8))
      out.cancel()
      out.close()
      assert(names(dir) == Set("3.changelog"))
      assert(new String(Files.readAllBytes(dir.resolve("3.changelog")), UTF_8) == "old")
    }
  }

  test("a file that replaces one Hadoop wrote reads back through Hadoop's local file system, checksum and all") {
    withDir { dir =>
      val conf = new Configuration()
      val path = new Path(dir.toUri.toString, "5.snapshot")
      val fs = FileSystem.get(path.toUri, conf)
      val hadoopOut = fs.create(path, true)
      hadoopOut.write("written by Hadoop, with a checksum file".getBytes(UTF_8))
      hadoopOut.close()
      assert(names(dir).contains(".5.snapshot.crc"))

      val out = LocalAtomicFile.create(LocalAtomicFile.localPath(path, conf))
      out.write("replaced".getBytes(UTF_8))
      out.close()
      val in = fs.open(path)
      try assert(IOUtils.toString(in, UTF_8) == "replaced")
      finally in.close()
      assert(names(dir) == Set("5.snapshot"))
    }
  }

  test("it is used for file: checkpoints, not when the user configured another file system or manager") {
    assert(LocalAtomicFile.applies(new Path("file:///tmp/checkpoint"), new Configuration()))
    assert(LocalAtomicFile.applies(new Path("/tmp/checkpoint"), new Configuration()))
    val otherManager = new Configuration()
    otherManager.set(LocalAtomicFile.ManagerClassKey, "org.example.MyCheckpointFileManager")
    assert(!LocalAtomicFile.applies(new Path("file:///tmp/checkpoint"), otherManager))
    val otherFileSystem = new Configuration()
    otherFileSystem.set(LocalAtomicFile.LocalFileSystemKey, classOf[org.apache.hadoop.fs.RawLocalFileSystem].getName)
    assert(!LocalAtomicFile.applies(new Path("file:///tmp/checkpoint"), otherFileSystem))
  }

  test("a store's checkpoint on the local file system holds no checksum or temporary files after commits") {
    withDir { dir =>
      import StoreFixtures._
      withProvider(newProvider(TtlProvider, dir.toFile, storeConf())) { p =>
        (0 until 3).foreach { v =>
          val store = p.getStore(v)
          store.put(key(s"k$v"), value(v.toLong))
          store.commit()
        }
      }
      val left = FileUtils.listFiles(dir.toFile, null, true).toArray.map(_.toString)
        .filter(n => n.endsWith(".crc") || n.endsWith(".tmp"))
      assert(left.isEmpty, left.mkString(", "))
      assert(FileUtils.listFiles(dir.toFile, Array("changelog"), true).size == 3)
    }
  }
}
