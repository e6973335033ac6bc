// libjpeg reports fatal errors by calling error_exit, which must not return; libpng's full API
// longjmps too. Both are contained here: a setjmp around every libjpeg call sequence, and libpng's
// simplified API, which catches its own errors and returns a failure with a message. Nothing here
// unwinds into Swift, and every buffer is sized from a header that was checked first.
#include "shelf_image.h"

#include <setjmp.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>

static void set_status(shelf_image *out, int status, const char *message) {
    out->status = status;
    snprintf(out->message, sizeof out->message, "%s", message ? message : "");
}

int shelf_image_format(const uint8_t *data, size_t size) {
    if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return SHELF_FORMAT_JPEG;
    static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (size >= 8 && memcmp(data, png_signature, 8) == 0) return SHELF_FORMAT_PNG;
    if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) return SHELF_FORMAT_WEBP;
    return SHELF_FORMAT_UNKNOWN;
}

static int within(uint32_t width, uint32_t height, shelf_image_limits limits) {
    return width > 0 && height > 0 && width <= limits.max_side && height <= limits.max_side &&
           (uint64_t)width * height <= limits.max_pixels;
}

// MARK: JPEG

struct jpeg_failure {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int truncated;
    char message[JMSG_LENGTH_MAX];
};

static void jpeg_fail(j_common_ptr cinfo) {
    struct jpeg_failure *failure = (struct jpeg_failure *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, failure->message);
    longjmp(failure->jump, 1);
}

// Warnings are not printed; a premature end of data is remembered, because libjpeg pads a
// truncated image with grey and carries on, and Shelf reports it as corrupt instead.
static void jpeg_note(j_common_ptr cinfo, int level) {
    struct jpeg_failure *failure = (struct jpeg_failure *)cinfo->err;
    if (level < 0) {
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) failure->truncated = 1;
        cinfo->err->num_warnings++;
    }
}

static void jpeg_setup_errors(struct jpeg_failure *failure) {
    jpeg_std_error(&failure->base);
    failure->base.error_exit = jpeg_fail;
    failure->base.emit_message = jpeg_note;
    failure->truncated = 0;
    failure->message[0] = 0;
}

static void probe_jpeg(const uint8_t *data, size_t size, shelf_image *out) {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_failure failure;
    cinfo.err = &failure.base;
    jpeg_setup_errors(&failure);
    if (setjmp(failure.jump)) {
        set_status(out, SHELF_IMAGE_CORRUPT, failure.message);
        jpeg_destroy_decompress(&cinfo);
        return;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    out->source_width = cinfo.image_width;
    out->source_height = cinfo.image_height;
    set_status(out, SHELF_IMAGE_OK, NULL);
    jpeg_destroy_decompress(&cinfo);
}

// CMYK and YCCK cannot be converted to RGBA by libjpeg: decode as CMYK and convert here.
// Adobe's files (the common case) store the inks inverted.
static void cmyk_to_rgba(const uint8_t *cmyk, uint8_t *rgba, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned c = cmyk[4 * x], m = cmyk[4 * x + 1], y = cmyk[4 * x + 2], k = cmyk[4 * x + 3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        rgba[4 * x] = (uint8_t)((c * k + 127) / 255);
        rgba[4 * x + 1] = (uint8_t)((m * k + 127) / 255);
        rgba[4 * x + 2] = (uint8_t)((y * k + 127) / 255);
        rgba[4 * x + 3] = 255;
    }
}

// The state of a JPEG decode between its two steps; the jump buffer is set again by each step.
typedef struct {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_failure failure;
    int cmyk;
} jpeg_decoder;

static jpeg_decoder *open_jpeg(const uint8_t *data, size_t size, uint32_t min_long_side, shelf_image_limits limits, shelf_image *out) {
    jpeg_decoder *volatile decoder = calloc(1, sizeof(jpeg_decoder));
    if (!decoder) {
        set_status(out, SHELF_IMAGE_NO_MEMORY, "out of memory");
        return NULL;
    }
    decoder->cinfo.err = &decoder->failure.base;
    jpeg_setup_errors(&decoder->failure);
    if (setjmp(decoder->failure.jump)) {
        set_status(out, SHELF_IMAGE_CORRUPT, decoder->failure.message);
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    // Progressive files buffer every coefficient; with no backing store, going past this limit
    // is an error instead of an unbounded allocation.
    decoder->cinfo.mem->max_memory_to_use = 256L * 1024 * 1024;
    jpeg_mem_src(&decoder->cinfo, data, (unsigned long)size);
    jpeg_read_header(&decoder->cinfo, TRUE);
    out->source_width = decoder->cinfo.image_width;
    out->source_height = decoder->cinfo.image_height;
    if (!within(decoder->cinfo.image_width, decoder->cinfo.image_height, limits)) {
        set_status(out, SHELF_IMAGE_TOO_LARGE, "image dimensions beyond the limit");
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return NULL;
    }
    // The smallest DCT scale (n/8) whose longer side still reaches the asked size: decoding
    // 1/8 of a picture costs a fraction of decoding it whole.
    uint32_t long_side = decoder->cinfo.image_width > decoder->cinfo.image_height ? decoder->cinfo.image_width : decoder->cinfo.image_height;
    unsigned scale = 8;
    for (unsigned n = 1; n <= 8; n++) {
        if (((uint64_t)long_side * n + 7) / 8 >= min_long_side) { scale = n; break; }
    }
    decoder->cinfo.scale_num = scale;
    decoder->cinfo.scale_denom = 8;
    decoder->cmyk = decoder->cinfo.jpeg_color_space == JCS_CMYK || decoder->cinfo.jpeg_color_space == JCS_YCCK;
    decoder->cinfo.out_color_space = decoder->cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    jpeg_start_decompress(&decoder->cinfo);
    out->width = decoder->cinfo.output_width;
    out->height = decoder->cinfo.output_height;
    out->scale_num = scale;
    set_status(out, SHELF_IMAGE_OK, NULL);
    return decoder;
}

static void finish_jpeg(jpeg_decoder *decoder, uint8_t *pixels, shelf_image *out) {
    uint8_t *volatile row_buffer = NULL;
    if (setjmp(decoder->failure.jump)) {
        set_status(out, SHELF_IMAGE_CORRUPT, decoder->failure.message);
        free(row_buffer);
        jpeg_destroy_decompress(&decoder->cinfo);
        free(decoder);
        return;
    }
    uint32_t width = decoder->cinfo.output_width, height = decoder->cinfo.output_height;
    if (decoder->cmyk) {
        row_buffer = malloc((size_t)width * 4);
        if (!row_buffer) {
            set_status(out, SHELF_IMAGE_NO_MEMORY, "out of memory for the decoded image");
            jpeg_destroy_decompress(&decoder->cinfo);
            free(decoder);
            return;
        }
    }
    while (decoder->cinfo.output_scanline < height) {
        uint8_t *target = pixels + (size_t)decoder->cinfo.output_scanline * width * 4;
        JSAMPROW row = decoder->cmyk ? row_buffer : target;
        if (jpeg_read_scanlines(&decoder->cinfo, &row, 1) != 1) break;
        if (decoder->cmyk) cmyk_to_rgba(row_buffer, target, width, decoder->cinfo.saw_Adobe_marker);
    }
    jpeg_finish_decompress(&decoder->cinfo);
    int truncated = decoder->failure.truncated;
    jpeg_destroy_decompress(&decoder->cinfo);
    free(row_buffer);
    free(decoder);
    if (truncated) {
        set_status(out, SHELF_IMAGE_CORRUPT, "the JPEG data ends early (truncated file)");
        return;
    }
    set_status(out, SHELF_IMAGE_OK, NULL);
}

// MARK: PNG

static void probe_png(const uint8_t *data, size_t size, png_image *image, shelf_image *out) {
    memset(image, 0, sizeof *image);
    image->version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(image, data, size)) {
        set_status(out, SHELF_IMAGE_CORRUPT, image->message);
        png_image_free(image);
        return;
    }
    out->source_width = image->width;
    out->source_height = image->height;
    set_status(out, SHELF_IMAGE_OK, NULL);
}

static png_image *open_png(const uint8_t *data, size_t size, shelf_image_limits limits, shelf_image *out) {
    png_image *image = malloc(sizeof(png_image));
    if (!image) {
        set_status(out, SHELF_IMAGE_NO_MEMORY, "out of memory");
        return NULL;
    }
    probe_png(data, size, image, out);
    if (out->status != SHELF_IMAGE_OK) {
        free(image);
        return NULL;
    }
    if (!within(image->width, image->height, limits)) {
        png_image_free(image);
        free(image);
        set_status(out, SHELF_IMAGE_TOO_LARGE, "image dimensions beyond the limit");
        return NULL;
    }
    image->format = PNG_FORMAT_RGBA;
    out->width = image->width;
    out->height = image->height;
    out->scale_num = 8;
    return image;
}

static void finish_png(png_image *image, uint8_t *pixels, shelf_image *out) {
    if (!png_image_finish_read(image, NULL, pixels, (png_int_32)(image->width * 4), NULL)) {
        set_status(out, SHELF_IMAGE_CORRUPT, image->message);
        png_image_free(image);
    } else {
        set_status(out, SHELF_IMAGE_OK, NULL);
    }
    free(image);
}

// MARK: WebP

// libwebp decodes in one call into a caller's buffer, so the "decoder" only remembers the input
// between the header check and the decode; libwebp returns failures, it never aborts.
typedef struct {
    const uint8_t *data;
    size_t size;
    uint32_t width;
    uint32_t height;
} webp_decoder;

static void probe_webp(const uint8_t *data, size_t size, shelf_image *out) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK || features.width <= 0 || features.height <= 0) {
        set_status(out, SHELF_IMAGE_CORRUPT, "not a readable WebP header");
        return;
    }
    if (features.has_animation) {
        set_status(out, SHELF_IMAGE_CORRUPT, "animated WebP is not a still picture");
        return;
    }
    out->source_width = (uint32_t)features.width;
    out->source_height = (uint32_t)features.height;
    set_status(out, SHELF_IMAGE_OK, NULL);
}

static webp_decoder *open_webp(const uint8_t *data, size_t size, shelf_image_limits limits, shelf_image *out) {
    probe_webp(data, size, out);
    if (out->status != SHELF_IMAGE_OK) return NULL;
    if (!within(out->source_width, out->source_height, limits)) {
        set_status(out, SHELF_IMAGE_TOO_LARGE, "image dimensions beyond the limit");
        return NULL;
    }
    webp_decoder *decoder = malloc(sizeof(webp_decoder));
    if (!decoder) {
        set_status(out, SHELF_IMAGE_NO_MEMORY, "out of memory");
        return NULL;
    }
    decoder->data = data;
    decoder->size = size;
    decoder->width = out->source_width;
    decoder->height = out->source_height;
    out->width = decoder->width;
    out->height = decoder->height;
    out->scale_num = 8;
    return decoder;
}

static void finish_webp(webp_decoder *decoder, uint8_t *pixels, shelf_image *out) {
    size_t stride = (size_t)decoder->width * 4;
    if (!WebPDecodeRGBAInto(decoder->data, decoder->size, pixels, stride * decoder->height, (int)stride)) {
        set_status(out, SHELF_IMAGE_CORRUPT, "the WebP data cannot be decoded (damaged or truncated)");
    } else {
        set_status(out, SHELF_IMAGE_OK, NULL);
    }
    free(decoder);
}

// MARK: Entry points

void shelf_image_probe(const uint8_t *data, size_t size, shelf_image *out) {
    memset(out, 0, sizeof *out);
    switch (shelf_image_format(data, size)) {
    case SHELF_FORMAT_JPEG: probe_jpeg(data, size, out); break;
    case SHELF_FORMAT_PNG: {
        png_image image;
        probe_png(data, size, &image, out);
        if (out->status == SHELF_IMAGE_OK) png_image_free(&image);
        break;
    }
    case SHELF_FORMAT_WEBP: probe_webp(data, size, out); break;
    default: set_status(out, SHELF_IMAGE_UNKNOWN_FORMAT, "neither JPEG, PNG nor WebP");
    }
}

struct shelf_decoder {
    int format;
    void *state;
};

static void cancel_state(int format, void *state);

void shelf_decoder_open(const uint8_t *data, size_t size, uint32_t min_long_side, shelf_image_limits limits, shelf_decoder **decoder,
                        shelf_image *out) {
    memset(out, 0, sizeof *out);
    *decoder = NULL;
    int format = shelf_image_format(data, size);
    void *state = NULL;
    switch (format) {
    case SHELF_FORMAT_JPEG: state = open_jpeg(data, size, min_long_side, limits, out); break;
    case SHELF_FORMAT_PNG: state = open_png(data, size, limits, out); break;
    case SHELF_FORMAT_WEBP: state = open_webp(data, size, limits, out); break;
    default: set_status(out, SHELF_IMAGE_UNKNOWN_FORMAT, "neither JPEG, PNG nor WebP"); return;
    }
    if (!state) return;
    shelf_decoder *result = malloc(sizeof(shelf_decoder));
    if (!result) {
        cancel_state(format, state);
        set_status(out, SHELF_IMAGE_NO_MEMORY, "out of memory");
        return;
    }
    result->format = format;
    result->state = state;
    *decoder = result;
}

void shelf_decoder_finish(shelf_decoder *decoder, uint8_t *pixels, shelf_image *out) {
    switch (decoder->format) {
    case SHELF_FORMAT_JPEG: finish_jpeg(decoder->state, pixels, out); break;
    case SHELF_FORMAT_WEBP: finish_webp(decoder->state, pixels, out); break;
    default: finish_png(decoder->state, pixels, out);
    }
    free(decoder);
}

static void cancel_state(int format, void *state) {
    if (format == SHELF_FORMAT_JPEG) {
        jpeg_decoder *jpeg = state;
        jpeg_destroy_decompress(&jpeg->cinfo);
        free(jpeg);
    } else if (format == SHELF_FORMAT_WEBP) {
        free(state);
    } else {
        png_image_free(state);
        free(state);
    }
}

void shelf_decoder_cancel(shelf_decoder *decoder) {
    if (!decoder) return;
    cancel_state(decoder->format, decoder->state);
    free(decoder);
}

// Separable area averaging: each output pixel is the mean of the source area it covers, with
// partly covered source pixels weighted by their coverage. Good for any reduction factor.
typedef struct {
    uint32_t first;
    uint32_t count;
    float *weights;
} span;

static span *make_spans(uint32_t source, uint32_t target, float **storage) {
    double ratio = (double)source / target;
    uint32_t most = (uint32_t)ratio + 2;
    span *spans = malloc(sizeof(span) * target);
    *storage = malloc(sizeof(float) * most * target);
    if (!spans || !*storage) {
        free(spans);
        free(*storage);
        return NULL;
    }
    for (uint32_t i = 0; i < target; i++) {
        double start = i * ratio, end = (i + 1) * ratio;
        uint32_t first = (uint32_t)start;
        uint32_t last = (uint32_t)end;
        if (last >= source) last = source - 1;
        if ((double)last == end && last > first) last--;
        spans[i].first = first;
        spans[i].count = last - first + 1;
        spans[i].weights = *storage + (size_t)i * most;
        for (uint32_t j = first; j <= last; j++) {
            double lo = j > start ? j : start, hi = j + 1 < end ? j + 1 : end;
            spans[i].weights[j - first] = (float)((hi - lo) / ratio);
        }
    }
    return spans;
}

int shelf_image_downscale(const uint8_t *pixels, uint32_t src_width, uint32_t src_height, uint8_t *result, uint32_t width,
                          uint32_t height) {
    if (width == 0 || height == 0 || width > src_width || height > src_height) return SHELF_IMAGE_CORRUPT;
    float *xstore = NULL, *ystore = NULL;
    span *xs = make_spans(src_width, width, &xstore);
    span *ys = make_spans(src_height, height, &ystore);
    float *rows = malloc(sizeof(float) * 4 * width * src_height);
    if (!xs || !ys || !rows) {
        if (xs) { free(xs); free(xstore); }
        if (ys) { free(ys); free(ystore); }
        free(rows);
        return SHELF_IMAGE_NO_MEMORY;
    }
    for (uint32_t y = 0; y < src_height; y++) {
        const uint8_t *source = pixels + (size_t)y * src_width * 4;
        float *target = rows + (size_t)y * width * 4;
        for (uint32_t x = 0; x < width; x++) {
            float r = 0, g = 0, b = 0, a = 0;
            const uint8_t *p = source + (size_t)xs[x].first * 4;
            for (uint32_t k = 0; k < xs[x].count; k++, p += 4) {
                float w = xs[x].weights[k];
                r += w * p[0]; g += w * p[1]; b += w * p[2]; a += w * p[3];
            }
            target[4 * x] = r; target[4 * x + 1] = g; target[4 * x + 2] = b; target[4 * x + 3] = a;
        }
    }
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *target = result + (size_t)y * width * 4;
        for (uint32_t x = 0; x < width * 4; x++) {
            float sum = 0;
            for (uint32_t k = 0; k < ys[y].count; k++) sum += ys[y].weights[k] * rows[(size_t)(ys[y].first + k) * width * 4 + x];
            int value = (int)(sum + 0.5f);
            target[x] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
        }
    }
    free(xs); free(xstore); free(ys); free(ystore); free(rows);
    return SHELF_IMAGE_OK;
}

static int encode_jpeg(const uint8_t *pixels, uint32_t width, uint32_t height, int quality, uint8_t **out_data, size_t *out_size,
                       char *message, size_t message_size) {
    struct jpeg_compress_struct cinfo;
    struct jpeg_failure failure;
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    cinfo.err = &failure.base;
    jpeg_setup_errors(&failure);
    if (setjmp(failure.jump)) {
        snprintf(message, message_size, "%s", failure.message);
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return SHELF_IMAGE_ENCODE_FAILED;
    }
    jpeg_create_compress(&cinfo);
    unsigned char *destination = NULL;
    jpeg_mem_dest(&cinfo, &destination, &size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * width * 4);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    buffer = destination;
    jpeg_destroy_compress(&cinfo);
    *out_data = buffer;
    *out_size = size;
    return SHELF_IMAGE_OK;
}

static int encode_png(const uint8_t *pixels, uint32_t width, uint32_t height, uint8_t **out_data, size_t *out_size, char *message,
                      size_t message_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = PNG_FORMAT_RGBA;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&image, NULL, &size, 0, pixels, 0, NULL)) {
        snprintf(message, message_size, "%s", image.message);
        return SHELF_IMAGE_ENCODE_FAILED;
    }
    uint8_t *buffer = malloc(size);
    if (!buffer) {
        snprintf(message, message_size, "out of memory for the encoded image");
        return SHELF_IMAGE_NO_MEMORY;
    }
    if (!png_image_write_to_memory(&image, buffer, &size, 0, pixels, 0, NULL)) {
        snprintf(message, message_size, "%s", image.message);
        free(buffer);
        return SHELF_IMAGE_ENCODE_FAILED;
    }
    *out_data = buffer;
    *out_size = size;
    return SHELF_IMAGE_OK;
}

int shelf_image_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int format, int quality, uint8_t **out_data,
                       size_t *out_size, char *message, size_t message_size) {
    *out_data = NULL;
    *out_size = 0;
    if (format == SHELF_FORMAT_JPEG) return encode_jpeg(pixels, width, height, quality, out_data, out_size, message, message_size);
    if (format == SHELF_FORMAT_PNG) return encode_png(pixels, width, height, out_data, out_size, message, message_size);
    snprintf(message, message_size, "unknown output format");
    return SHELF_IMAGE_ENCODE_FAILED;
}

void shelf_image_free(void *pointer) { free(pointer); }

void shelf_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

#define SHELF_STRINGIFY2(x) #x
#define SHELF_STRINGIFY(x) SHELF_STRINGIFY2(x)

const char *shelf_image_jpeg_turbo_version(void) {
#ifdef LIBJPEG_TURBO_VERSION
    return SHELF_STRINGIFY(LIBJPEG_TURBO_VERSION);
#else
    return "";
#endif
}

uint32_t shelf_image_png_version_number(void) { return (uint32_t)png_access_version_number(); }

uint32_t shelf_image_webp_version_number(void) { return (uint32_t)WebPGetDecoderVersion(); }
