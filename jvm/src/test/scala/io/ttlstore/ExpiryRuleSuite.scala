package io.ttlstore

import scala.io.Source
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.ttlstore.ttl.{Durations, ExpiryRule}

class ExpiryRuleSuite extends AnyFunSuite {
  import ExpiryRule._

  test("the golden vectors shared with the native filter's C tests hold") {
    val source = Source.fromResource("golden/expiry-vectors.tsv")
    val vectors =
      try source.getLines().filterNot(l => l.startsWith("#") || l.isEmpty).toList
      finally source.close()
    assert(vectors.size >= 10)
    vectors.foreach { line =>
      val Array(name, ts, ttl, now, expired) = line.split('\t')
      assert(isExpired(ts.toLong, ttl.toLong, now.toLong) == (expired == "1"), name)
    }
  }

  test("a row is expired exactly when ts + ttl <= now") {
    assert(!isExpired(ts = 100, ttlMs = 10, now = 109))
    assert(isExpired(ts = 100, ttlMs = 10, now = 110))
    assert(isExpired(ts = 100, ttlMs = 10, now = 111))
  }

  test("TTL 0 or less never expires anything") {
    assert(!isExpired(ts = 0, ttlMs = 0, now = Long.MaxValue))
    assert(!isExpired(ts = 0, ttlMs = -5, now = Long.MaxValue))
  }

  test("a huge TTL saturates instead of overflowing into the past") {
    assert(expiresAt(Long.MaxValue - 5, 10) == Long.MaxValue)
    assert(!isExpired(ts = Long.MaxValue - 5, ttlMs = Long.MaxValue, now = Long.MaxValue - 1))
    assert(!isExpired(ts = 1000, ttlMs = Long.MaxValue, now = Long.MaxValue - 1))
  }

  test("negative timestamps (event times before 1970) follow the same rule") {
    assert(isExpired(ts = -100, ttlMs = 50, now = -50))
    assert(!isExpired(ts = -100, ttlMs = 50, now = -51))
    assert(isExpired(ts = Long.MinValue, ttlMs = 1, now = 0))
  }

  test("the rule agrees with exact arithmetic on random inputs") {
    val r = new Random(7)
    (1 to 100000).foreach { _ =>
      val ts = r.nextLong()
      val ttl = if (r.nextBoolean()) r.nextLong().abs else r.nextInt(1000).toLong
      val now = r.nextLong()
      val exact =
        BigInt(ts) + BigInt(ttl) <= BigInt(now) || (BigInt(ts) + BigInt(ttl) > Long.MaxValue && now == Long.MaxValue)
      assert(isExpired(ts, ttl, now) == (ttl > 0 && exact), s"ts=$ts ttl=$ttl now=$now")
    }
  }

  test("durations parse in the units users write, and refuse what is not one") {
    assert(Durations.parseMillis("10 minutes").contains(600000L))
    assert(Durations.parseMillis("30s").contains(30000L))
    assert(Durations.parseMillis("1h").contains(3600000L))
    assert(Durations.parseMillis("2 DAYS").contains(172800000L))
    assert(Durations.parseMillis("1500").contains(1500L))
    assert(Durations.parseMillis("0").contains(0L))
    Seq("-5s", "ten minutes", "1.5h", "5 months", "", "99999999999999999999", "9999999999999999 days")
      .foreach(bad => assert(Durations.parseMillis(bad).isEmpty, bad))
  }

  test("durations read the examples shared with Python as golden/durations.tsv says") {
    val source = Source.fromResource("golden/durations.tsv")
    val cases =
      try source.getLines().filterNot(_.startsWith("#")).map(_.split("\t", -1)).toList
      finally source.close()
    assert(cases.size > 20)
    cases.foreach { case Array(text, expected) =>
      val want = if (expected == "refused") None else Some(expected.toLong)
      assert(Durations.parseMillis(text) == want, s"'$text'")
    }
  }

  test("durations print as the shortest exact unit") {
    assert(Durations.format(600000L) == "10 minutes")
    assert(Durations.format(1000L) == "1 second")
    assert(Durations.format(1500L) == "1500 ms")
  }
}
