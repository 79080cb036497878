package io.ttlstore.store.local

import java.io.File

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.SstFile

/**
 * Which local SST files remote mode demotes ([[LocalSstCache.toDemote]]) and which remote ones it brings down
 * ([[LocalSstCache.toPromote]]): pure choices, over sizes and ticks.
 */
class LocalSstCacheSuite extends AnyFunSuite {
  private val MiB = 1L << 20

  private def local(name: String, mb: Long, uploaded: Boolean, lastRead: Long): LocalSstCache.Local =
    LocalSstCache.Local(null, new File(s"$name.sst"), mb * MiB,
      if (uploaded) Some(SstFile(s"$name.sst", s"$name-x.sst", mb * MiB, 0L)) else None, lastRead)

  private def names(files: Seq[LocalSstCache.Local]): Seq[String] = files.map(_.file.getName.stripSuffix(".sst"))

  test("the least recently read uploaded files are demoted until what stays local fits the budget") {
    val files = Seq(local("hot", 2, uploaded = true, lastRead = 90), local("cold", 2, uploaded = true, lastRead = 10),
      local("warm", 2, uploaded = true, lastRead = 50), local("fresh", 2, uploaded = false, lastRead = 1))
    assert(names(LocalSstCache.toDemote(files, 5 * MiB)) == Seq("cold", "warm"))
    assert(names(LocalSstCache.toDemote(files, 7 * MiB)) == Seq("cold"))
  }

  test("nothing is demoted while the local files fit the budget") {
    assert(LocalSstCache.toDemote(Seq(local("a", 1, uploaded = true, lastRead = 0)), MiB).isEmpty)
  }

  test("a file no snapshot uploaded stays local even over the budget") {
    val files = Seq(local("fresh", 8, uploaded = false, lastRead = 0), local("old", 1, uploaded = true, lastRead = 5))
    assert(names(LocalSstCache.toDemote(files, MiB)) == Seq("old"))
  }

  private def remote(name: String, mb: Long, lastRead: Long): LocalSstCache.Remote =
    LocalSstCache.Remote(null, new File(s"$name.sst"), SstFile(s"$name.sst", s"$name-x.sst", mb * MiB, 0L), lastRead)

  private def promoted(files: Seq[LocalSstCache.Remote]): Seq[String] = files.map(_.file.getName.stripSuffix(".sst"))

  test("the most recently read remote files are brought down while they fit the room left") {
    val files = Seq(remote("cold", 1, lastRead = 10), remote("hot", 2, lastRead = 90), remote("warm", 2, lastRead = 50))
    assert(promoted(LocalSstCache.toPromote(files, 4 * MiB)) == Seq("hot", "warm"))
    assert(promoted(LocalSstCache.toPromote(files, 3 * MiB)) == Seq("hot", "cold"), "warm does not fit, cold does")
  }

  test("nothing is brought down where the local files leave no room") {
    assert(LocalSstCache.toPromote(Seq(remote("a", 1, lastRead = 7)), 0L).isEmpty)
    assert(LocalSstCache.toPromote(Seq(remote("a", 1, lastRead = 7)), -5 * MiB).isEmpty)
  }

  test("files never read come after those read, the smaller first") {
    val files = Seq(remote("big", 3, lastRead = 0), remote("small", 1, lastRead = 0), remote("read", 2, lastRead = 1))
    assert(promoted(LocalSstCache.toPromote(files, 10 * MiB)) == Seq("read", "small", "big"))
  }
}
