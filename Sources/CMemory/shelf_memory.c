#include "shelf_memory.h"

// <stdlib.h> first: it is what defines __GLIBC__ (through <features.h>), which the test below needs.
#include <stdlib.h>

#if defined(__GLIBC__)
#include <malloc.h>

int shelf_memory_limit_arenas(int count) { return mallopt(M_ARENA_MAX, count) == 1; }

int shelf_memory_trim(void) { return malloc_trim(0); }

int shelf_memory_map_from(size_t bytes) { return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1; }

size_t shelf_memory_mapped(void) { return mallinfo2().hblkhd; }

size_t shelf_memory_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

size_t shelf_memory_free(void) { return mallinfo2().fordblks; }
#else
int shelf_memory_limit_arenas(int count) { (void)count; return 0; }
int shelf_memory_trim(void) { return 0; }
int shelf_memory_map_from(size_t bytes) { (void)bytes; return 0; }
size_t shelf_memory_mapped(void) { return 0; }
size_t shelf_memory_in_use(void) { return 0; }
size_t shelf_memory_free(void) { return 0; }
#endif
