// What the `shelf` and `shelf-bench` executables know about the build they came from.
#ifndef SHELF_BUILD_H
#define SHELF_BUILD_H

/// The short git commit this build was made from, or "unknown". `make` writes it into the
/// gitignored build_commit.h beside shelf_build.c before building; a plain `swift build` in a fresh
/// clone (or a tarball without .git) has no such file and gets "unknown", so the build never fails
/// for want of it and the tree never shows a generated file as modified.
const char *shelf_build_commit(void);

#endif
