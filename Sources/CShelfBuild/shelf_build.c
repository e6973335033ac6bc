// The commit lives in C rather than Swift because C can include a file only when it exists
// (__has_include), and clang's dependency files make SwiftPM recompile this when `make` rewrites it.
#include "shelf_build.h"

#if __has_include("build_commit.h")
#include "build_commit.h"
#endif

#ifndef SHELF_BUILD_COMMIT
#define SHELF_BUILD_COMMIT "unknown"
#endif

const char *shelf_build_commit(void) { return SHELF_BUILD_COMMIT; }
