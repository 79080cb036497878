package io.ttlstore

import java.io.File
import java.nio.file.Files
import java.util.UUID

import org.apache.commons.io.FileUtils
import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.store.rocksdb.LocalWorkDirs.Owner
import io.ttlstore.store.rocksdb.LocalWorkDirs

class LocalWorkDirsSuite extends AnyFunSuite {

  private val self = LocalWorkDirs.self

  private def withRoot(body: File => Unit): Unit = {
    val root = Files.createTempDirectory("work-dirs").toFile
    try body(root)
    finally FileUtils.deleteQuietly(root)
  }

  /** A working directory of `owner`'s under `root`, with a file in it as a store's would have. */
  private def dirOf(root: File, owner: Owner): File = {
    val dir = new File(root, LocalWorkDirs.name(owner, UUID.randomUUID()))
    assert(dir.mkdirs())
    Files.write(new File(dir, "CURRENT").toPath, "MANIFEST-000001\n".getBytes)
    dir
  }

  /** A real process, started and waited for: its id belongs to no running process afterwards. */
  private def endedProcess(): ProcessHandle = {
    val p = new ProcessBuilder("true").start()
    p.waitFor()
    p.toHandle
  }

  private def startOf(p: ProcessHandle): Long = p.info().startInstant().get.toEpochMilli

  test("a directory's name records its owner, and only names of that form are read as owned") {
    val id = UUID.randomUUID()
    assert(LocalWorkDirs.ownerOf(LocalWorkDirs.name(self, id)).contains(self))
    assert(LocalWorkDirs.ownerOf(s"ttlstore-$id").isEmpty) // made before names carried owners
    assert(LocalWorkDirs.ownerOf("ttlstore-notes").isEmpty)
  }

  test("the directories of a process that no longer runs are removed; its neighbours stay") {
    withRoot { root =>
      val dead = dirOf(root, self.copy(pid = endedProcess().pid()))
      val mine = dirOf(root, self)
      val older = new File(root, s"ttlstore-${UUID.randomUUID()}")
      assert(older.mkdirs())
      val unrelated = new File(root, "blockmgr-1")
      assert(unrelated.mkdirs())

      assert(LocalWorkDirs.removeAbandoned(root) == Seq(dead))
      assert(!dead.exists())
      assert(mine.exists() && older.exists() && unrelated.exists())
    }
  }

  test("a running process keeps its directories, unless its id now belongs to a process started later") {
    withRoot { root =>
      val sleeper = new ProcessBuilder("sleep", "60").start()
      try {
        val handle = sleeper.toHandle
        val running = dirOf(root, self.copy(pid = handle.pid(), startMs = startOf(handle)))
        val reused = dirOf(root, self.copy(pid = handle.pid(), startMs = startOf(handle) - 60000))

        assert(LocalWorkDirs.removeAbandoned(root) == Seq(reused))
        assert(running.exists())
      } finally sleeper.destroyForcibly().waitFor()
    }
  }

  test("directories of another host are never judged: its processes are not this host's to see") {
    withRoot { root =>
      val elsewhere = dirOf(root,
        self.copy(host = LocalWorkDirs.hostHash("another-host"),
          pid = endedProcess().pid()))

      assert(LocalWorkDirs.removeAbandoned(root).isEmpty)
      assert(elsewhere.exists())
    }
  }

  test("the first working directory a JVM makes under a root clears what killed processes left there") {
    withRoot { root =>
      val dead = dirOf(root, self.copy(pid = endedProcess().pid()))
      val made = LocalWorkDirs.create(root)

      assert(!dead.exists())
      assert(LocalWorkDirs.ownerOf(made.getName).contains(self))
      LocalWorkDirs.release(made)
    }
  }

  test("whether a directory is abandoned is a pure rule over the process table") {
    val owner = Owner(self.host, 42L, 1000L)
    assert(LocalWorkDirs.abandoned(owner, self, _ => None))
    assert(!LocalWorkDirs.abandoned(owner, self, _ => Some(Some(1000L))))
    assert(LocalWorkDirs.abandoned(owner, self, _ => Some(Some(2000L))))
    assert(!LocalWorkDirs.abandoned(owner, self, _ => Some(None)))
    assert(!LocalWorkDirs.abandoned(owner.copy(startMs = 0L), self, _ => Some(Some(2000L))))
    assert(!LocalWorkDirs.abandoned(self, self, _ => None))
  }
}
