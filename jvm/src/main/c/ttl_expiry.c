#include "ttl_expiry.h"

int ttl_read_timestamp(const unsigned char *value, size_t length, int64_t *ts) {
  if (value == NULL || length < TTL_TIMESTAMP_BYTES) return 0;
  uint64_t v = 0;
  for (int i = 0; i < TTL_TIMESTAMP_BYTES; i++) v = (v << 8) | value[i];
  *ts = (int64_t)v;
  return 1;
}

int64_t ttl_expires_at(int64_t ts, int64_t ttl_ms) {
  if (ttl_ms <= 0) return INT64_MAX;
  if (ts > INT64_MAX - ttl_ms) return INT64_MAX;
  return ts + ttl_ms;
}

int ttl_is_expired(int64_t ts, int64_t ttl_ms, int64_t now) {
  return ttl_ms > 0 && ttl_expires_at(ts, ttl_ms) <= now;
}

int ttl_should_remove(const unsigned char *value, size_t length, int64_t ttl_ms, int64_t now) {
  int64_t ts;
  return ttl_read_timestamp(value, length, &ts) && ttl_is_expired(ts, ttl_ms, now);
}
