package io.ttlstore.store.local

import scala.util.hashing.MurmurHash3

/**
 * A Bloom filter over keys that grows with them: a chain of parts, each twice the size of the one
 * before, a key going into the newest (a scalable Bloom filter). [[mightContain]] false is certain;
 * true is wrong for about 1% of the keys never added, per part.
 *
 * A part holds [[BitsPerKey]] bits per key it is sized for, in blocks of one cache line, and sets
 * [[Probes]] of them per key in one block (a blocked Bloom filter, from one MurmurHash3 hash of the
 * key's bytes: its high bits pick the block, its 64-bit mix the bits): a lookup reads one cache line per
 * part and stops at the first clear bit. [[add]] does not add a key already answered for, so
 * [[keys]] counts distinct keys (less the rare false positives) and updates never grow the filter;
 * [[addNew]], for a key known to be new, skips that check. Pure: no clock, no I/O; not thread-safe.
 */
final class KeyBloom(firstCapacity: Int = KeyBloom.FirstCapacity) {
  import KeyBloom._

  private var parts = Array(new Part(firstCapacity))
  private var added = 0L

  /** False if `key` was certainly never added. */
  def mightContain(key: Array[Byte]): Boolean = contains(hash(key))

  /** Adds `key` (nothing if the filter already answers true for it); the key is hashed once. */
  def add(key: Array[Byte]): Unit = {
    val h = hash(key)
    if (!contains(h)) set(h)
  }

  /**
   * Adds `key` without asking first, for a key the caller knows is new to the set the filter stands for (a
   * false positive, or a key added before and since deleted, is then counted again): a new key's check passes
   * every part, a cache miss each once the parts outgrow the CPU's caches.
   */
  def addNew(key: Array[Byte]): Unit = set(hash(key))

  private def set(h: Int): Unit = {
    var last = parts(parts.length - 1)
    if (last.count >= last.capacity) {
      last = new Part(math.min(MaxPartCapacity.toLong, last.capacity.toLong * 2).toInt)
      parts = parts :+ last
    }
    last.probe(h, set = true)
    last.count += 1
    added += 1
  }

  private def contains(h: Int): Boolean = {
    var i = parts.length - 1
    while (i >= 0) {
      if (parts(i).probe(h, set = false)) return true
      i -= 1
    }
    false
  }

  private def hash(key: Array[Byte]): Int = MurmurHash3.bytesHash(key, Seed)

  /** Distinct keys added. */
  def keys: Long = added

  /** Heap bytes of its bit arrays. */
  def bytes: Long = parts.map(_.bytes).sum
}

object KeyBloom {

  /** Keys the first part is sized for: 80 KiB of bits. */
  val FirstCapacity: Int = 1 << 16

  /** The largest part: 64M keys, 80 MiB of bits (its bit index stays within an Int). */
  val MaxPartCapacity: Int = 1 << 26

  /** About 1% false positives per part at 7 probes. */
  val BitsPerKey = 10
  val Probes = 7

  private val Seed = 0x2f6b9c1d

  /** Bits in a block: one cache line, so that a lookup reads one line per part. */
  private val BlockBits = 512

  private final class Part(val capacity: Int) {
    private val blocks = math.max(1L, (capacity.toLong * BitsPerKey + BlockBits - 1) / BlockBits).toInt
    private val words = new Array[Long](blocks * (BlockBits / 64))
    var count = 0

    def bytes: Long = words.length * 8L

    /** With `set`, sets the key's bits and returns true; else true if they are all set (stops at the first clear). */
    def probe(h: Int, set: Boolean): Boolean = {
      val base = block(h)
      var x = positions(h)
      var p = 0
      while (p < Probes) {
        val bit = (x & (BlockBits - 1)).toInt
        val word = base + (bit >>> 6)
        if (set) words(word) |= 1L << bit
        else if ((words(word) & (1L << bit)) == 0L) return false
        x >>>= 9
        p += 1
      }
      true
    }

    // The block: the hash mapped onto [0, blocks) by multiplication, not modulo (its high bits).
    private def block(h: Int): Int = (((h & 0xffffffffL) * blocks) >>> 32).toInt * (BlockBits / 64)

    // Seven 9-bit positions in the block, from the hash mixed into 64 bits (MurmurHash3's finalizer).
    private def positions(h: Int): Long = {
      var x = (h & 0xffffffffL) * 0x9e3779b97f4a7c15L
      x = (x ^ (x >>> 33)) * 0xff51afd7ed558ccdL
      x = (x ^ (x >>> 33)) * 0xc4ceb9fe1a85ec53L
      x ^ (x >>> 33)
    }
  }
}
