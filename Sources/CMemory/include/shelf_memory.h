#ifndef SHELF_MEMORY_H
#define SHELF_MEMORY_H
// The C allocator's knobs a long-running server turns: glibc's <malloc.h> is not in Swift's
// Glibc module.

#include <stddef.h>

/// Caps how many malloc arenas threads spread over (glibc makes up to 8 per core, and each keeps
/// what its threads freed). Returns 1 when the allocator took it, 0 where there is no such knob.
int shelf_memory_limit_arenas(int count);

/// Hands the pages malloc holds free, in every arena, back to the system. Returns 1 when some
/// memory was released.
int shelf_memory_trim(void);

/// Serves every block of at least `bytes` from its own mapping, returned to the system when freed,
/// and pins that size: by default glibc raises it to the largest block freed so far (up to 32 MiB),
/// after which a server's large transient buffers are cut from the arenas and leave holes there.
/// Returns 1 when the allocator took it.
int shelf_memory_map_from(size_t bytes);

/// Bytes in blocks served from their own mappings now.
size_t shelf_memory_mapped(void);

/// Bytes malloc has handed out and not had back (small blocks and mapped ones): the live heap,
/// which RSS exceeds by what the allocator keeps free.
size_t shelf_memory_in_use(void);

/// Bytes malloc holds free for reuse inside its arenas: what fragmentation or a burst left behind,
/// which RSS counts until it is trimmed.
size_t shelf_memory_free(void);

#endif
