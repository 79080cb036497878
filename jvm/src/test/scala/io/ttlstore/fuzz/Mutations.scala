package io.ttlstore.fuzz

import scala.util.Random

/**
 * Damaged versions of a file's bytes, as a fuzzer makes them: random bytes, flipped bits, a cut,
 * a length-like field overwritten with a huge or negative number, bytes inserted, removed or
 * repeated. Pure: the same seed gives the same inputs.
 */
object Mutations {

  /** One damaged input: what was done (to report a failing case) and the bytes. */
  final case class Input(what: String, bytes: Array[Byte])

  /** 32-bit values a damaged length field most likely holds. */
  private val LengthLike = Seq(0x7fffffff, -1, Int.MinValue, 0x3fffffff, 0x10000000, 0xffff, -2)

  /** The `n`-th input made from `original` with `seed`. */
  def input(original: Array[Byte], seed: Long, n: Int): Input = {
    // java.util.Random's first draws follow its seed closely: seeds n and n + 1 chose the same kind
    // of damage for hundreds of inputs in a row. SplittableRandom mixes the seed first.
    val rng = new Random(new java.util.SplittableRandom(seed * 1000003L + n).nextLong())
    def position(max: Int) = if (max <= 0) 0 else rng.nextInt(max)
    rng.nextInt(8) match {
      case 0 =>
        val bytes = new Array[Byte](rng.nextInt(2 * original.length + 2))
        rng.nextBytes(bytes)
        Input(s"${bytes.length} random bytes", bytes)
      case 1 | 2 =>
        val bytes = original.clone()
        val flips = 1 + rng.nextInt(8)
        (0 until flips).foreach { _ =>
          if (bytes.nonEmpty) {
            val at = position(bytes.length); bytes(at) = (bytes(at) ^ (1 << rng.nextInt(8))).toByte
          }
        }
        Input(s"$flips bits flipped", bytes)
      case 3 =>
        val at = position(original.length)
        Input(s"cut at $at of ${original.length}", original.take(at))
      case 4 | 5 =>
        val bytes = original.clone()
        val at = position(bytes.length - 3)
        val value = LengthLike(rng.nextInt(LengthLike.length))
        (0 until math.min(4, bytes.length - at)).foreach(i => bytes(at + i) = (value >>> (24 - 8 * i)).toByte)
        Input(f"0x$value%08x written at $at", bytes)
      case 6 =>
        val at = position(original.length)
        val extra = new Array[Byte](1 + rng.nextInt(64))
        rng.nextBytes(extra)
        Input(s"${extra.length} random bytes inserted at $at", original.take(at) ++ extra ++ original.drop(at))
      case _ =>
        val at = position(original.length)
        val length = 1 + rng.nextInt(math.max(1, math.min(64, original.length - at)))
        if (rng.nextBoolean()) Input(s"$length bytes removed at $at", original.take(at) ++ original.drop(at + length))
        else Input(s"$length bytes repeated at $at",
          original.take(at + length) ++ original.slice(at, at + length) ++
            original.drop(at + length))
    }
  }
}
