package io.ttlstore.store.local

import java.io.File

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.checkpoint.SstFile

/** Which local SST files remote mode demotes ([[LocalSstCache.toDemote]]): a pure choice, over sizes and ticks. */
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
}
