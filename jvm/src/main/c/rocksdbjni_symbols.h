/* The librocksdbjni that the JVM has loaded, for dlsym: found among the loaded objects, never
 * loaded a second time (it has no SONAME to link against). */
#ifndef TTLSTORE_ROCKSDBJNI_SYMBOLS_H
#define TTLSTORE_ROCKSDBJNI_SYMBOLS_H

#include <dlfcn.h>
#include <stddef.h>

/* A dlopen handle of the loaded librocksdbjni, or NULL with the reason written to `error`. */
void *ttlstore_rocksdbjni(char *error, size_t error_size);

#endif
