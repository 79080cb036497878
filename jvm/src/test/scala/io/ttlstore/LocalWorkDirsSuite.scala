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

  test("a directory's and a claim's names record their owner, and only names of those forms are read as owned") {
    val id = UUID.randomUUID()
    assert(LocalWorkDirs.ownerOf(LocalWorkDirs.name(self, id)).contains(self))
    assert(LocalWorkDirs.ownerOf(s"ttlstore-$id").isEmpty) // made before names carried owners
    assert(LocalWorkDirs.ownerOf("ttlstore-notes").isEmpty)
    assert(LocalWorkDirs.claimOwner(LocalWorkDirs.claimFile(new File("root"), self).getName).contains(self))
    assert(LocalWorkDirs.claimOwner(LocalWorkDirs.name(self, id)).isEmpty)
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

  test("a running process keeps its directories whatever start time they record, as after the clock was stepped") {
    withRoot { root =>
      val sleeper = new ProcessBuilder("sleep", "60").start()
      try {
        val handle = sleeper.toHandle
        val recorded = dirOf(root, self.copy(pid = handle.pid(), startMs = startOf(handle)))
        val stepped = dirOf(root, self.copy(pid = handle.pid(), startMs = startOf(handle) - 60000))

        assert(LocalWorkDirs.removeAbandoned(root).isEmpty)
        assert(recorded.exists() && stepped.exists())
      } finally sleeper.destroyForcibly().waitFor()
    }
  }

  /** Another JVM that claims `root` as an owner of start time 1 (no clock is read) until it is killed. */
  private def claimingProcess(root: File): Process = {
    val source = new File(root, "Claim.java")
    Files.write(source.toPath,
      s"""import java.nio.channels.FileChannel; import java.nio.file.*;
         |public class Claim { public static void main(String[] a) throws Exception {
         |  long pid = ProcessHandle.current().pid();
         |  Path claim = Paths.get(a[0], ".ttlstore-${self.host}-" + pid + "-1.claim");
         |  FileChannel.open(claim, StandardOpenOption.CREATE, StandardOpenOption.WRITE).lock();
         |  System.out.println(pid); System.out.flush(); Thread.sleep(120000);
         |}}""".stripMargin.getBytes)
    new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath, source.getPath, root.getPath)
      .redirectError(ProcessBuilder.Redirect.INHERIT).start()
  }

  test("an owner's claim keeps its directories while it runs; once it is killed, they and the claim go") {
    withRoot { root =>
      val holder = claimingProcess(root)
      try {
        val pid = new java.io.BufferedReader(new java.io.InputStreamReader(holder.getInputStream)).readLine().toLong
        val owner = Owner(self.host, pid, 1L)
        val theirs = dirOf(root, owner)
        assert(LocalWorkDirs.removeAbandoned(root).isEmpty)
        assert(theirs.exists())

        holder.destroyForcibly().waitFor()
        assert(LocalWorkDirs.removeAbandoned(root) == Seq(theirs))
        assert(!theirs.exists() && !LocalWorkDirs.claimFile(root, owner).exists())
      } finally holder.destroyForcibly().waitFor()
    }
  }

  test("the claim of an owner whose id now belongs to another process is free, so its directories go") {
    withRoot { root =>
      val sleeper = new ProcessBuilder("sleep", "60").start()
      try {
        val earlier = self.copy(pid = sleeper.toHandle.pid(), startMs = startOf(sleeper.toHandle) - 60000)
        assert(LocalWorkDirs.claimFile(root, earlier).createNewFile()) // left by the id's killed first owner
        val reused = dirOf(root, earlier)

        assert(LocalWorkDirs.removeAbandoned(root) == Seq(reused))
        assert(!LocalWorkDirs.claimFile(root, earlier).exists())
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
      assert(LocalWorkDirs.claimFile(root, self).exists())
      LocalWorkDirs.release(made)
    }
  }

  test("whether a directory is abandoned is a pure rule over its owner's claim and the process table") {
    import LocalWorkDirs.Claim
    val owner = Owner(self.host, 42L, 1000L)
    assert(LocalWorkDirs.abandoned(owner, self, Claim.Free, _ => true))
    assert(!LocalWorkDirs.abandoned(owner, self, Claim.Held, _ => false))
    assert(LocalWorkDirs.abandoned(owner, self, Claim.Missing, _ => false))
    assert(!LocalWorkDirs.abandoned(owner, self, Claim.Missing, _ => true))
    assert(!LocalWorkDirs.abandoned(self, self, Claim.Free, _ => false))
    assert(!LocalWorkDirs.abandoned(owner.copy(host = LocalWorkDirs.hostHash("another-host")), self, Claim.Free,
        _ => false))
  }

}
