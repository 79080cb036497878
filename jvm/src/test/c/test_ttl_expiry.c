/*
 * C tests of the native filter's decision: the golden vectors shared with the Scala tests, then a
 * bounded fuzz run of random values against an independent reference (128-bit arithmetic).
 * Built with AddressSanitizer and UndefinedBehaviorSanitizer by `make test-native`.
 * Usage: test_ttl_expiry <expiry-vectors.tsv> <timestamped-values.tsv> [fuzz iterations]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttl_expiry.h"

static int failures = 0, checks = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    checks++;                                              \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

static FILE *open_or_die(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
  return f;
}

static void expiry_vectors(const char *path) {
  FILE *f = open_or_die(path);
  char line[512], name[128];
  int64_t ts, ttl, now;
  int expired, n = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%127s %" SCNd64 " %" SCNd64 " %" SCNd64 " %d", name, &ts, &ttl, &now, &expired) != 5) {
      fprintf(stderr, "bad golden line: %s", line);
      exit(2);
    }
    CHECK(ttl_is_expired(ts, ttl, now) == expired, "expiry vector %s", name);
    n++;
  }
  fclose(f);
  CHECK(n >= 10, "only %d expiry vectors", n);
}

static int hex_value(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void value_vectors(const char *path) {
  FILE *f = open_or_die(path);
  char line[1024], name[128], hex[512], expected[64];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    /* An empty value is written as an empty hex field: name, tab, tab, expected. */
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t1 || !t2) { fprintf(stderr, "bad golden line: %s", line); exit(2); }
    size_t hex_len = (size_t)(t2 - t1 - 1);
    memcpy(name, line, (size_t)(t1 - line)); name[t1 - line] = 0;
    memcpy(hex, t1 + 1, hex_len); hex[hex_len] = 0;
    sscanf(t2 + 1, "%63s", expected);
    unsigned char bytes[256];
    size_t len = hex_len / 2;
    for (size_t i = 0; i < len; i++) bytes[i] = (unsigned char)(hex_value(hex[2 * i]) * 16 + hex_value(hex[2 * i + 1]));
    /* Copy into an exactly sized heap block so that AddressSanitizer sees any read past the end. */
    unsigned char *value = malloc(len ? len : 1);
    memcpy(value, bytes, len);
    int64_t ts = 0;
    int has = ttl_read_timestamp(value, len, &ts);
    if (strcmp(expected, "none") == 0) {
      CHECK(!has, "%s carries no timestamp", name);
      CHECK(!ttl_should_remove(value, len, 1, INT64_MAX), "%s (too short) is never removed", name);
    } else {
      CHECK(has && ts == strtoll(expected, NULL, 10), "%s decodes to %s", name, expected);
    }
    free(value);
    n++;
  }
  fclose(f);
  CHECK(n >= 8, "only %d value vectors", n);
}

static uint64_t state = 0x9E3779B97F4A7C15ULL;
static uint64_t next_random(void) { /* xorshift64* */
  state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

static int reference_remove(const unsigned char *v, size_t len, int64_t ttl, int64_t now) {
  if (len < 8 || ttl <= 0) return 0;
  uint64_t u = 0;
  for (size_t i = 0; i < 8; i++) u = u * 256 + v[i];
  __int128 at = (__int128)(int64_t)u + ttl;
  if (at > INT64_MAX) at = INT64_MAX;
  return at <= now;
}

static void fuzz(long iterations) {
  for (long i = 0; i < iterations; i++) {
    size_t len = (size_t)(next_random() % 25);
    unsigned char *value = malloc(len ? len : 1);
    for (size_t j = 0; j < len; j++) value[j] = (unsigned char)next_random();
    int64_t ttl = (int64_t)(next_random() % 4 == 0 ? next_random() : next_random() % 100000);
    int64_t now = (int64_t)next_random();
    if (next_random() % 2 && len >= 8) { /* near the boundary, where off-by-one errors live */
      int64_t ts;
      ttl_read_timestamp(value, len, &ts);
      now = ttl > 0 && ts <= INT64_MAX - ttl ? ts + ttl - (int64_t)(next_random() % 3) + 1 : now;
    }
    CHECK(ttl_should_remove(value, len, ttl, now) == reference_remove(value, len, ttl, now),
          "fuzz case %ld (length %zu, ttl %" PRId64 ", now %" PRId64 ")", i, len, ttl, now);
    free(value);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s expiry-vectors.tsv timestamped-values.tsv [iterations]\n", argv[0]); return 2; }
  expiry_vectors(argv[1]);
  value_vectors(argv[2]);
  fuzz(argc > 3 ? atol(argv[3]) : 200000);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
