// Shelf's C view of TagLib (C++): read and write a file's tags, audio properties and pictures.
// Every entry point catches every C++ exception and reports a status; nothing unwinds into Swift.
#ifndef SHELF_TAGS_H
#define SHELF_TAGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SHELF_TAGS_OK = 0,
    /// The file cannot be opened or is not an audio file TagLib understands.
    SHELF_TAGS_UNREADABLE = 1,
    /// The file opened but its tags or stream could not be parsed.
    SHELF_TAGS_INVALID = 2,
    /// Saving failed (read-only file, full disk, unsupported tag type).
    SHELF_TAGS_WRITE_FAILED = 3,
    /// An unexpected C++ exception (out of memory, for example).
    SHELF_TAGS_INTERNAL = 4,
};

/// What one file holds: tag properties as unified keys (TITLE, ARTISTSORT, TRACKNUMBER, LYRICS…),
/// audio properties, and the preferred embedded picture.
typedef struct shelf_tags shelf_tags;

/// Reads `path`; on success `*out` must be released with shelf_tags_free.
int shelf_tags_read(const char *path, shelf_tags **out, char *message, size_t message_size);

/// Like shelf_tags_read, but a file TagLib opens without finding an audio stream it decodes still
/// gives its tags and picture (audio properties 0), for a caller that reads the stream elsewhere.
int shelf_tags_read_tags(const char *path, shelf_tags **out, char *message, size_t message_size);

/// The number of properties, and each one's key and first value (UTF-8, owned by `tags`).
size_t shelf_tags_count(const shelf_tags *tags);
const char *shelf_tags_key(const shelf_tags *tags, size_t index);
const char *shelf_tags_value(const shelf_tags *tags, size_t index);
/// How many values property `index` has (at least one), and each of them in the file's order.
size_t shelf_tags_value_count(const shelf_tags *tags, size_t index);
const char *shelf_tags_value_at(const shelf_tags *tags, size_t index, size_t position);

/// Audio properties; 0 when unknown.
int64_t shelf_tags_length_ms(const shelf_tags *tags);
int32_t shelf_tags_bitrate(const shelf_tags *tags);
int32_t shelf_tags_sample_rate(const shelf_tags *tags);
int32_t shelf_tags_channels(const shelf_tags *tags);
/// Bits per sample of a lossless stream (FLAC, PCM, WavPack, APE, ALAC, TTA); 0 otherwise.
int32_t shelf_tags_bit_depth(const shelf_tags *tags);
/// An MP3's ID3v2 major version (3 or 4), else 0.
int32_t shelf_tags_id3v2_version(const shelf_tags *tags);
/// The codec's short name ("mp3", "aac", "alac", "flac", "vorbis", "opus", "pcm", "wavpack", "ape", "wma", "tta").
const char *shelf_tags_codec(const shelf_tags *tags);

/// The embedded picture (front cover preferred), or NULL; `*size` gets its length.
const uint8_t *shelf_tags_picture(const shelf_tags *tags, size_t *size);
const char *shelf_tags_picture_mime(const shelf_tags *tags);

void shelf_tags_free(shelf_tags *tags);

/// Sets (or, with a NULL value, removes) properties by unified key and saves the file in place;
/// a value holding U+001F is several values, written as the format writes lists.
int shelf_tags_write(const char *path, const char *const *keys, const char *const *values, size_t count, char *message,
                     size_t message_size);

/// Replaces the embedded pictures with one front cover (NULL data removes them) and saves.
int shelf_tags_write_picture(const char *path, const uint8_t *data, size_t size, const char *mime, char *message,
                             size_t message_size);

/// The TagLib version this shim was compiled against ("1.13.0"), from taglib.h's version macros:
/// TagLib 1.x has no run-time version call, and its ABI is tied to the major version it was built for.
const char *shelf_tags_taglib_version(void);

#ifdef __cplusplus
}
#endif

#endif
