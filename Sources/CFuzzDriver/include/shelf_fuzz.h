#ifndef SHELF_FUZZ_H
#define SHELF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/// One input to a fuzz target: 0 to keep it in the corpus, -1 to reject it.
typedef int (*shelf_fuzz_callback)(const uint8_t *data, size_t size);

/// Runs libFuzzer over `callback` when the binary was linked with it (`-sanitize=fuzzer`);
/// otherwise (an ordinary build) runs the callback once over each file or each file of each
/// folder named in `argv` after the first, so that seeds and crash inputs replay anywhere.
/// Returns the process's exit status.
int shelf_fuzz_run(int argc, char **argv, shelf_fuzz_callback callback);

/// Whether libFuzzer is linked in.
int shelf_fuzz_has_libfuzzer(void);

#endif
