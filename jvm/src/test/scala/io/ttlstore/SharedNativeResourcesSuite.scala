package io.ttlstore

import org.scalatest.funsuite.AnyFunSuite
import io.ttlstore.store.rocksdb.SharedNativeResources

class SharedNativeResourcesSuite extends AnyFunSuite {
  private val MiB = 1024L * 1024

  test("the shared cache has shards of at least 4 MiB, and at most 64 of them as RocksDB's default") {
    assert(SharedNativeResources.shardBits(1 * MiB) == 0)
    assert(SharedNativeResources.shardBits(64 * MiB) == 4)
    assert(SharedNativeResources.shardBits(100 * MiB) == 4)
    assert(SharedNativeResources.shardBits(512 * MiB) == 6)
    assert(SharedNativeResources.shardBits(64 * 1024 * MiB) == 6)
  }
}
