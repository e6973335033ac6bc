// Shelf's C side of listening to a track: FFmpeg's libraries decode it once, to mono 22,050 Hz for
// the sonic descriptors (FFTW3 transforms). It runs inside `shelf analyze-worker`, a child process, so that a
// decoder crash on a hostile file costs one worker, never the server.
#ifndef SHELF_SONIC_H
#define SHELF_SONIC_H

#include <stdint.h>

/// Outcomes of one analysis.
enum {
    SHELF_SONIC_OK = 0,
    SHELF_SONIC_UNDECODABLE = 1,
    SHELF_SONIC_TOO_SHORT = 2,
    SHELF_SONIC_SILENT = 3,
    SHELF_SONIC_CANCELLED = 4,
    SHELF_SONIC_NO_MEMORY = 5,
};

/// The number of numbers in a version-1 feature vector (their order is `SonicFeatures` in Swift).
#define SHELF_SONIC_COUNT 57
/// The analysis rate and frame: 2,048-sample Hann windows every 512 samples, centred.
#define SHELF_SONIC_RATE 22050
#define SHELF_SONIC_FFT 2048
#define SHELF_SONIC_HOP 512
/// Tracks shorter than this many seconds are recorded as too short.
#define SHELF_SONIC_MIN_SECONDS 5.0
/// Only this many seconds from the start are analysed: 42 MB of samples at most.
#define SHELF_SONIC_MAX_SECONDS 480.0

/// What one analysis found.
typedef struct {
    int32_t status;
    /// Seconds of audio decoded.
    double seconds;
    float features[SHELF_SONIC_COUNT];
    char reason[256];
} shelf_sonic_result;

/// Decodes `path` (from `start` to `end` seconds; 0 or less = the file's start or end) and computes
/// its descriptors. `cancel` (may be NULL) is polled between packets.
/// `pcm_out` (may be NULL) receives the analysed mono float samples as raw f32le, for the tests'
/// independent judges. Returns `out->status`.
int32_t shelf_sonic_analyze(const char *path, double start, double end,
                            const volatile int32_t *cancel, const char *pcm_out, shelf_sonic_result *out);

/// Analyses mono samples at 22,050 Hz already in memory (the benchmark's and tests' entry).
int32_t shelf_sonic_analyze_samples(const float *samples, int64_t count, shelf_sonic_result *out);



/// The `limit` rows nearest `query` whose group (audio) is not `skip_group`, nearest first (ties
/// by row): one pass with a bounded heap. Returns how many were found (-1: out of memory).
int32_t shelf_sonic_nearest(const int8_t *vectors, int64_t count, int32_t dims, const int8_t *query, const int32_t *groups, int32_t skip_group,
                            int32_t limit, int64_t *rows, int32_t *distances);

/// For `steps` evenly spaced points on the line from `a` to `b`, the `keep` rows nearest each
/// point (among rows that project between the ends and are neither end's group), nearest first:
/// `rows` and `costs` (squared distances) of `steps * keep` entries, -1 and infinity where none.
int32_t shelf_sonic_path_candidates(const int8_t *vectors, int64_t count, int32_t dims, const int8_t *a, const int8_t *b, const int32_t *groups,
                                    int32_t skip_a, int32_t skip_b, int32_t steps, int32_t keep, int64_t *rows, double *costs);

#endif
