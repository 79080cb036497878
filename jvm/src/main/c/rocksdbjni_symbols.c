#define _GNU_SOURCE
#include "rocksdbjni_symbols.h"

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

void *ttlstore_rocksdbjni(char *error, size_t error_size) {
  char path[4096] = {0};
  if (!dl_iterate_phdr(find_rocksdbjni, path)) {
    snprintf(error, error_size, "no librocksdbjni is loaded in this process (load RocksDB first)");
    return NULL;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) snprintf(error, error_size, "cannot reopen %s: %s", path, dlerror());
  return lib;
}
