#define _GNU_SOURCE
#include "rocksdbjni_symbols.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int find_rocksdbjni(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "librocksdbjni")) {
    snprintf((char *)data, 4096, "%s", info->dlpi_name);
    return 1;
  }
  return 0;
}

void *ttlstore_rocksdbjni_reopen(int flags, char *path, size_t path_size, char *error, size_t error_size) {
  char found[4096] = {0};
  if (!dl_iterate_phdr(find_rocksdbjni, found)) {
    snprintf(error, error_size, "no librocksdbjni is loaded in this process (load RocksDB first)");
    return NULL;
  }
  snprintf(path, path_size, "%s", found);
  void *lib = dlopen(found, RTLD_NOW | RTLD_NOLOAD | flags);
  if (lib == NULL) snprintf(error, error_size, "cannot reopen %s: %s", found, dlerror());
  return lib;
}

int ttlstore_rocksdbjni_symbols(const char *const *names, void **found, int count, char *error, size_t error_size) {
  char path[4096];
  void *lib = ttlstore_rocksdbjni_reopen(0, path, sizeof path, error, error_size);
  if (lib == NULL) return -1;
  for (int i = 0; i < count; i++) {
    found[i] = dlsym(lib, names[i]);
    if (found[i] == NULL) {
      snprintf(error, error_size, "%s does not export %s", path, names[i]);
      return -1;
    }
  }
  return 0;
}
