/* The librocksdbjni that the JVM has loaded, for dlsym: found among the loaded objects, never
 * loaded a second time (it has no SONAME to link against). */
#ifndef TTLSTORE_ROCKSDBJNI_SYMBOLS_H
#define TTLSTORE_ROCKSDBJNI_SYMBOLS_H

#include <stddef.h>

/* Reopens the loaded librocksdbjni (RTLD_NOLOAD, with `flags`: RTLD_GLOBAL makes its symbols bind
 * libraries loaded after it) and writes its path into `path`. Returns the handle, or NULL with why
 * in `error`. */
void *ttlstore_rocksdbjni_reopen(int flags, char *path, size_t path_size, char *error, size_t error_size);

/* Looks up the `count` functions `names` in the loaded librocksdbjni into `found`. Returns 0, or -1
 * with what is missing (no library, or the first name it does not export, with its path) in `error`. */
int ttlstore_rocksdbjni_symbols(const char *const *names, void **found, int count, char *error, size_t error_size);

#endif
