// Shelf's C side of image decoding: libjpeg-turbo, libpng and libwebp (decoding only) behind
// entry points that never longjmp or abort into Swift. Every function returns a status; errors carry a message.
#ifndef SHELF_IMAGE_H
#define SHELF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

enum {
    SHELF_IMAGE_OK = 0,
    SHELF_IMAGE_UNKNOWN_FORMAT = 1,
    SHELF_IMAGE_CORRUPT = 2,
    SHELF_IMAGE_TOO_LARGE = 3,
    SHELF_IMAGE_NO_MEMORY = 4,
    SHELF_IMAGE_ENCODE_FAILED = 5,
};

enum { SHELF_FORMAT_UNKNOWN = 0, SHELF_FORMAT_JPEG = 1, SHELF_FORMAT_PNG = 2, SHELF_FORMAT_WEBP = 3 };

/// Refusal limits, checked against the header before any pixel buffer is allocated.
typedef struct {
    uint32_t max_side;
    uint64_t max_pixels;
} shelf_image_limits;

/// What a decode step reports: status, sizes, scale, and the codec's message on failure.
typedef struct {
    int32_t status;
    uint32_t width;
    uint32_t height;
    /// The dimensions the file declares, before any scaling.
    uint32_t source_width;
    uint32_t source_height;
    /// The DCT scale used for JPEG (numerator over 8; 8 for PNG).
    uint32_t scale_num;
    char message[160];
} shelf_image;

/// The format named by the first bytes (JPEG SOI, PNG signature, RIFF…WEBP), or SHELF_FORMAT_UNKNOWN.
int shelf_image_format(const uint8_t *data, size_t size);

/// Reads only the header: dimensions into `out` (status, source_width, source_height).
void shelf_image_probe(const uint8_t *data, size_t size, shelf_image *out);

/// A decode in two steps, so that the caller allocates the pixels once it knows the size.
typedef struct shelf_decoder shelf_decoder;

/// Reads the header, checks the limits and picks the scale: RGBA whose longer side is at least
/// `min_long_side` where the source allows (JPEG: the smallest DCT scale that keeps it; PNG: full
/// size). On success `out->width`/`height` are the output size and `*decoder` must be passed to
/// shelf_decoder_finish or shelf_decoder_cancel. `data` must stay valid until then.
void shelf_decoder_open(const uint8_t *data, size_t size, uint32_t min_long_side, shelf_image_limits limits, shelf_decoder **decoder,
                        shelf_image *out);

/// Decodes every row into `pixels` (width × height × 4 bytes) and frees the decoder.
void shelf_decoder_finish(shelf_decoder *decoder, uint8_t *pixels, shelf_image *out);

/// Frees a decoder that will not be finished.
void shelf_decoder_cancel(shelf_decoder *decoder);

/// Area-averaging downscale of RGBA pixels into `target` (`width` × `height` × 4 bytes, each side
/// no larger than the source's). Returns 0, or SHELF_IMAGE_NO_MEMORY.
int shelf_image_downscale(const uint8_t *pixels, uint32_t src_width, uint32_t src_height, uint8_t *target, uint32_t width,
                          uint32_t height);

/// Encodes RGBA pixels as PNG (quality ignored) or JPEG (quality 1-100) into a malloc'd buffer.
int shelf_image_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int format, int quality,
                       uint8_t **out_data, size_t *out_size, char *message, size_t message_size);

/// Hands memory malloc holds free back to the system (glibc's malloc_trim): decoded images are
/// large and short-lived, and glibc otherwise keeps their pages after a free.
void shelf_release_free_memory(void);

/// Frees a buffer returned by this module.
void shelf_image_free(void *pointer);

/// The libjpeg-turbo version compiled against ("2.1.5"): 2.x has no run-time version call, only
/// jconfig.h's LIBJPEG_TURBO_VERSION.
const char *shelf_image_jpeg_turbo_version(void);

/// The libpng version loaded at run time (png_access_version_number, e.g. 10639 for 1.6.39).
uint32_t shelf_image_png_version_number(void);

/// The libwebp decoder loaded at run time, as 0xMMmmrr (1.2.4 → 0x010204).
uint32_t shelf_image_webp_version_number(void);

#endif
