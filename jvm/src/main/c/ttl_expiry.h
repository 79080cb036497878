/*
 * The TTL expiry decision of ttlstore's native compaction filter: the same rule as the JVM's
 * io.ttlstore.ExpiryRule, over the value layout of io.ttlstore.TimestampedValue:
 *
 *   offset 0                8                   8 + n
 *          | timestamp      | value row          |
 *          | int64, big-    | Spark UnsafeRow    |
 *          | endian, ms     | bytes              |
 *
 * Pure functions: no clock, no allocation, safe from any number of compaction threads.
 */
#ifndef TTLSTORE_TTL_EXPIRY_H
#define TTLSTORE_TTL_EXPIRY_H

#include <stddef.h>
#include <stdint.h>

#define TTL_TIMESTAMP_BYTES 8

/* Reads the timestamp of a stored value into *ts; returns 0 (and leaves *ts) if the value is too
 * short to carry one. */
int ttl_read_timestamp(const unsigned char *value, size_t length, int64_t *ts);

/* The first instant at which a row stamped ts is expired: ts + ttl_ms, saturating at INT64_MAX;
 * INT64_MAX when ttl_ms <= 0 (TTL off). */
int64_t ttl_expires_at(int64_t ts, int64_t ttl_ms);

/* 1 if a row stamped ts is expired at now (ts + ttl_ms <= now, saturating), else 0. */
int ttl_is_expired(int64_t ts, int64_t ttl_ms, int64_t now);

/* 1 if the compaction filter removes this stored value: it carries a timestamp and is expired.
 * Values too short to carry a timestamp are always kept. */
int ttl_should_remove(const unsigned char *value, size_t length, int64_t ttl_ms, int64_t now);

#endif
