// TagLib behind a C API. TagLib rarely throws, but allocation can, and a C++ exception crossing
// into Swift would abort the process: every entry point wraps its body in try/catch.
#include "shelf_tags.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <taglib/aifffile.h>
#include <taglib/apefile.h>
#include <taglib/apetag.h>
#include <taglib/asffile.h>
#include <taglib/attachedpictureframe.h>
#include <taglib/fileref.h>
#include <taglib/flacfile.h>
#include <taglib/commentsframe.h>
#include <taglib/id3v1tag.h>
#include <taglib/id3v2tag.h>
#include <taglib/textidentificationframe.h>
#include <taglib/unsynchronizedlyricsframe.h>
#include <taglib/urllinkframe.h>
#include <taglib/mp4file.h>
#include <taglib/mpegfile.h>
#include <taglib/opusfile.h>
#include <taglib/tpropertymap.h>
#include <taglib/trueaudiofile.h>
#include <taglib/vorbisfile.h>
#include <taglib/wavfile.h>
#include <taglib/wavpackfile.h>
#include <taglib/xiphcomment.h>

struct shelf_tags {
    /// Each unified key with all its values, in the file's order.
    std::vector<std::pair<std::string, std::vector<std::string>>> properties;
    int64_t length_ms = 0;
    int32_t bitrate = 0, sample_rate = 0, channels = 0, bit_depth = 0, id3v2_version = 0;
    std::string codec;
    std::vector<uint8_t> picture;
    std::string picture_mime;
};

namespace {

void say(char *message, size_t size, const std::string &text) {
    if (message && size > 0) std::snprintf(message, size, "%s", text.c_str());
}

void take(shelf_tags *tags, const TagLib::ByteVector &data, const TagLib::String &mime) {
    tags->picture.assign(data.data(), data.data() + data.size());
    tags->picture_mime = mime.to8Bit(true);
}

// ID3v2 (MP3, WAV, AIFF): the front cover, else the first picture.
void fromID3v2(shelf_tags *tags, TagLib::ID3v2::Tag *tag) {
    if (!tag) return;
    const auto &frames = tag->frameListMap()["APIC"];
    TagLib::ID3v2::AttachedPictureFrame *chosen = nullptr;
    for (auto *frame : frames) {
        auto *picture = dynamic_cast<TagLib::ID3v2::AttachedPictureFrame *>(frame);
        if (!picture) continue;
        if (!chosen || picture->type() == TagLib::ID3v2::AttachedPictureFrame::FrontCover) chosen = picture;
        if (picture->type() == TagLib::ID3v2::AttachedPictureFrame::FrontCover) break;
    }
    if (chosen) take(tags, chosen->picture(), chosen->mimeType());
}

template <typename List> void fromFLACPictures(shelf_tags *tags, const List &pictures) {
    TagLib::FLAC::Picture *chosen = nullptr;
    for (auto *picture : pictures) {
        if (!chosen || picture->type() == TagLib::FLAC::Picture::FrontCover) chosen = picture;
        if (picture->type() == TagLib::FLAC::Picture::FrontCover) break;
    }
    if (chosen) take(tags, chosen->data(), chosen->mimeType());
}

void fromAPE(shelf_tags *tags, TagLib::APE::Tag *tag) {
    if (!tag) return;
    const auto &items = tag->itemListMap();
    auto found = items.find("COVER ART (FRONT)");
    if (found == items.end()) return;
    // The value is a file name, a NUL, then the bytes.
    TagLib::ByteVector value = found->second.binaryData();
    int nul = value.find('\0');
    if (nul < 0) return;
    take(tags, value.mid(nul + 1), "");
}

void readPicture(shelf_tags *tags, TagLib::File *file) {
    if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) {
        fromID3v2(tags, mpeg->ID3v2Tag());
        if (tags->picture.empty()) fromAPE(tags, mpeg->APETag());
    } else if (auto *wav = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) {
        fromID3v2(tags, wav->ID3v2Tag());
    } else if (auto *aiff = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) {
        fromID3v2(tags, aiff->tag());
    } else if (auto *flac = dynamic_cast<TagLib::FLAC::File *>(file)) {
        fromFLACPictures(tags, flac->pictureList());
        if (tags->picture.empty() && flac->xiphComment()) fromFLACPictures(tags, flac->xiphComment()->pictureList());
    } else if (auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file)) {
        if (mp4->tag() && mp4->tag()->contains("covr")) {
            auto covers = mp4->tag()->item("covr").toCoverArtList();
            if (!covers.isEmpty()) {
                auto cover = covers.front();
                take(tags, cover.data(), cover.format() == TagLib::MP4::CoverArt::PNG ? "image/png" : "image/jpeg");
            }
        }
    } else if (auto *vorbis = dynamic_cast<TagLib::Ogg::Vorbis::File *>(file)) {
        if (vorbis->tag()) fromFLACPictures(tags, vorbis->tag()->pictureList());
    } else if (auto *opus = dynamic_cast<TagLib::Ogg::Opus::File *>(file)) {
        if (opus->tag()) fromFLACPictures(tags, opus->tag()->pictureList());
    } else if (auto *ape = dynamic_cast<TagLib::APE::File *>(file)) {
        fromAPE(tags, ape->APETag());
    } else if (auto *wavpack = dynamic_cast<TagLib::WavPack::File *>(file)) {
        fromAPE(tags, wavpack->APETag());
    } else if (auto *asf = dynamic_cast<TagLib::ASF::File *>(file)) {
        if (asf->tag() && asf->tag()->contains("WM/Picture")) {
            auto attributes = asf->tag()->attribute("WM/Picture");
            if (!attributes.isEmpty()) {
                auto picture = attributes.front().toPicture();
                if (picture.isValid()) take(tags, picture.picture(), picture.mimeType());
            }
        }
    }
}

// Bits per sample of the lossless streams that declare it; 0 for the others.
int32_t bitDepthOf(TagLib::File *file) {
    if (auto *f = dynamic_cast<TagLib::FLAC::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::WavPack::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::APE::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::TrueAudio::File *>(file)) return f->audioProperties() ? f->audioProperties()->bitsPerSample() : 0;
    if (auto *f = dynamic_cast<TagLib::MP4::File *>(file)) {
        auto *p = f->audioProperties();
        return p && p->codec() == TagLib::MP4::Properties::ALAC ? p->bitsPerSample() : 0;
    }
    return 0;
}

// The major version of an MP3's ID3v2 tag (3 or 4), else 0: lists in 2.3 are joined with "/".
int32_t id3v2VersionOf(TagLib::File *file) {
    auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file);
    if (!mpeg || !mpeg->hasID3v2Tag()) return 0;
    return static_cast<int32_t>(mpeg->ID3v2Tag()->header()->majorVersion());
}

std::string codecOf(TagLib::File *file) {
    if (dynamic_cast<TagLib::MPEG::File *>(file)) return "mp3";
    if (dynamic_cast<TagLib::RIFF::WAV::File *>(file) || dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) return "pcm";
    if (dynamic_cast<TagLib::FLAC::File *>(file)) return "flac";
    if (auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file)) {
        auto *properties = mp4->audioProperties();
        return properties && properties->codec() == TagLib::MP4::Properties::ALAC ? "alac" : "aac";
    }
    if (dynamic_cast<TagLib::Ogg::Vorbis::File *>(file)) return "vorbis";
    if (dynamic_cast<TagLib::Ogg::Opus::File *>(file)) return "opus";
    if (dynamic_cast<TagLib::WavPack::File *>(file)) return "wavpack";
    if (dynamic_cast<TagLib::APE::File *>(file)) return "ape";
    if (dynamic_cast<TagLib::ASF::File *>(file)) return "wma";
    if (dynamic_cast<TagLib::TrueAudio::File *>(file)) return "tta";
    return "";
}

// TagLib opens some non-audio data as a stream (an empty .mp3, noise named .flac): a file with no
// decodable audio properties is refused, so that nothing is imported from it or written into it.
bool hasAudio(const TagLib::FileRef &ref) {
    auto *audio = ref.audioProperties();
    return audio && audio->sampleRate() > 0 && audio->channels() > 0;
}

// Runs an entry point's body, turning any C++ exception into a status and a message.
template <typename Body> int guarded(char *message, size_t message_size, Body body) {
    try {
        return body();
    } catch (const std::exception &error) {
        say(message, message_size, std::string("TagLib failed: ") + error.what());
        return SHELF_TAGS_INTERNAL;
    } catch (...) {
        say(message, message_size, "TagLib failed with an unknown exception");
        return SHELF_TAGS_INTERNAL;
    }
}

// Opens a file for writing (it must hold an audio stream), lets `edit` change it, and saves it
// when `edit` reports success.
template <typename Edit> int editFile(const char *path, char *message, size_t message_size, Edit edit) {
    return guarded(message, message_size, [&]() -> int {
        TagLib::FileRef ref(path, true, TagLib::AudioProperties::Fast);
        if (ref.isNull() || !ref.file() || !ref.file()->isValid() || !hasAudio(ref)) {
            say(message, message_size, "not an audio file TagLib can write (no audio stream found)");
            return SHELF_TAGS_UNREADABLE;
        }
        int status = edit(ref.file());
        if (status != SHELF_TAGS_OK) return status;
        bool saved;
        if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(ref.file())) {
            // The ID3v2 version the file had (TagLib would make every file 2.4, and Picard users
            // often keep 2.3 for players that read nothing newer); no copying between ID3v1 and v2.
            TagLib::ID3v2::Tag *id3 = mpeg->ID3v2Tag();
            const bool v3 = id3 && id3->header()->majorVersion() == 3;
            saved = mpeg->save(TagLib::MPEG::File::AllTags, TagLib::File::StripNone, v3 ? TagLib::ID3v2::v3 : TagLib::ID3v2::v4,
                               TagLib::File::DoNotDuplicate);
        } else {
            saved = ref.save();
        }
        if (!saved) {
            say(message, message_size, "TagLib could not save the file");
            return SHELF_TAGS_WRITE_FAILED;
        }
        return SHELF_TAGS_OK;
    });
}

} // namespace

namespace {

// An APEv2 tag at the end of a file (before an ID3v1 tag, if any): where its footer starts, or -1.
long apeFooter(TagLib::File *file) {
    for (long back : {32L, 160L}) {
        if (file->length() < back) continue;
        file->seek(-back, TagLib::File::End);
        if (file->readBlock(8) == TagLib::ByteVector("APETAGEX")) return file->length() - back;
    }
    return -1;
}

std::vector<std::string> utf8(const TagLib::StringList &values) {
    std::vector<std::string> out;
    out.reserve(values.size());
    for (const auto &value : values) out.push_back(value.to8Bit(true));
    return out;
}

// TagLib 1.13 maps only the freeform MP4 atoms it knows (MusicBrainz IDs, ARTISTS, LABEL…) to
// properties; the rest (replaygain_*, R128, beets' and foobar2000's own names) it reports as
// unsupported. Those of the iTunes namespace are added under their upper-cased names, as the
// other containers spell them.
void addMP4Freeform(shelf_tags *tags, TagLib::File *file, const TagLib::PropertyMap &properties) {
    auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file);
    if (!mp4 || !mp4->tag()) return;
    static const TagLib::String prefix("----:com.apple.iTunes:");
    for (const auto &key : properties.unsupportedData()) {
        if (!key.startsWith(prefix) || !mp4->tag()->contains(key)) continue;
        TagLib::StringList values = mp4->tag()->item(key).toStringList();
        if (values.isEmpty()) continue;
        std::string name = key.substr(prefix.size()).upper().to8Bit(true);
        bool known = false;
        for (const auto &existing : tags->properties) known = known || existing.first == name;
        if (!known) tags->properties.emplace_back(name, utf8(values));
    }
}

// ID3v2's involved-people frames read pair by pair. TagLib 1.13 drops a whole TIPL frame from its
// properties when one role is not one it names, which is what an ID3v2.3 file always has: its one
// IPLS frame (read as TIPL) holds the instruments too. Known roles become their keys, any other
// role (and every TMCL pair) a PERFORMER:ROLE key, as TagLib names TMCL's.
void addInvolvedPeople(shelf_tags *tags, TagLib::ID3v2::Tag *tag) {
    if (!tag) return;
    static const char *const roles[][2] = {
        {"arranger", "ARRANGER"}, {"engineer", "ENGINEER"}, {"producer", "PRODUCER"}, {"dj-mix", "DJMIXER"}, {"mix", "MIXER"}};
    auto &properties = tags->properties;
    auto drop = [&](auto test) {
        for (auto it = properties.begin(); it != properties.end();) it = test(it->first) ? properties.erase(it) : it + 1;
    };
    // TagLib 1.13 maps no property to TSST (ID3v2.4's disc subtitle).
    const TagLib::ID3v2::FrameList subtitles = tag->frameList("TSST");
    if (!subtitles.isEmpty()) {
        bool known = false;
        for (const auto &entry : properties) known = known || entry.first == "DISCSUBTITLE";
        auto *text = dynamic_cast<TagLib::ID3v2::TextIdentificationFrame *>(subtitles.front());
        if (!known && text && !text->fieldList().isEmpty()) properties.emplace_back("DISCSUBTITLE", utf8(text->fieldList()));
    }
    bool any = !tag->frameList("TIPL").isEmpty() || !tag->frameList("TMCL").isEmpty();
    if (!any) return;
    drop([](const std::string &key) {
        return key == "ARRANGER" || key == "ENGINEER" || key == "PRODUCER" || key == "DJMIXER" || key == "MIXER" ||
               key.rfind("PERFORMER:", 0) == 0;
    });
    auto add = [&](const std::string &key, const std::string &name) {
        for (auto &entry : properties) {
            if (entry.first == key) {
                entry.second.push_back(name);
                return;
            }
        }
        properties.emplace_back(key, std::vector<std::string>{name});
    };
    for (const char *id : {"TIPL", "TMCL"}) {
        const bool musicians = std::strcmp(id, "TMCL") == 0;
        for (auto *frame : tag->frameList(id)) {
            auto *text = dynamic_cast<TagLib::ID3v2::TextIdentificationFrame *>(frame);
            if (!text) continue;
            const TagLib::StringList pairs = text->fieldList();
            for (unsigned int i = 0; i + 1 < pairs.size(); i += 2) {
                const std::string role = pairs[i].to8Bit(true), name = pairs[i + 1].to8Bit(true);
                if (name.empty()) continue;
                std::string key;
                if (!musicians) {
                    std::string lower = TagLib::String(role, TagLib::String::UTF8).to8Bit(true);
                    for (auto &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    for (const auto &known : roles)
                        if (lower == known[0]) key = known[1];
                }
                if (key.empty()) key = "PERFORMER:" + TagLib::String(role, TagLib::String::UTF8).upper().to8Bit(true);
                add(key, name);
            }
        }
    }
}

// TagLib 1.13 reads only ID3 tags in TrueAudio files, but ffmpeg (and most taggers) put an
// APEv2 tag at their end: its values fill the keys the ID3 tags left out, and give a picture.
void addTrueAudioAPE(shelf_tags *tags, TagLib::File *file) {
    if (!dynamic_cast<TagLib::TrueAudio::File *>(file)) return;
    long footer = apeFooter(file);
    if (footer < 0) return;
    TagLib::APE::Tag ape(file, footer);
    for (const auto &entry : ape.properties()) {
        if (entry.second.isEmpty()) continue;
        std::string key = entry.first.to8Bit(true);
        bool known = false;
        for (const auto &existing : tags->properties) known = known || existing.first == key;
        if (!known) tags->properties.emplace_back(key, utf8(entry.second));
    }
    if (tags->picture.empty()) fromAPE(tags, &ape);
}

// Every unsynchronised lyrics frame of an ID3v2 tag as "SHELF:USLT" values, each its language
// (three letters, as tagged), U+0001, then the text: TagLib's LYRICS property keeps neither the
// language nor more than the frames without a description, and a file may hold one per language.
void addLyricsFrames(shelf_tags *tags, TagLib::ID3v2::Tag *tag) {
    std::vector<std::string> values;
    for (auto *frame : tag->frameList("USLT")) {
        auto *lyrics = dynamic_cast<TagLib::ID3v2::UnsynchronizedLyricsFrame *>(frame);
        if (!lyrics || lyrics->text().isEmpty()) continue;
        const TagLib::ByteVector language = lyrics->language();
        std::string value(language.data(), language.size());
        value += '\x01';
        value += lyrics->text().to8Bit(true);
        values.push_back(value);
    }
    if (!values.empty()) tags->properties.emplace_back("SHELF:USLT", values);
}

// Reads tags, properties and picture. With `requireAudio` false, a file TagLib opens but whose
// stream it cannot decode (an MP4 sample entry or WAV layout TagLib 1.13 does not know) still
// gives its tags, with zero audio properties: the caller reads those elsewhere.
int readFile(const char *path, shelf_tags **out, char *message, size_t message_size, bool requireAudio) {
    *out = nullptr;
    return guarded(message, message_size, [&]() -> int {
        TagLib::FileRef ref(path, true, TagLib::AudioProperties::Average);
        if (ref.isNull() || !ref.file()) {
            say(message, message_size, "not an audio file TagLib can read (unknown format or unreadable)");
            return SHELF_TAGS_UNREADABLE;
        }
        TagLib::File *file = ref.file();
        if (!file->isValid() || (requireAudio && !hasAudio(ref))) {
            say(message, message_size, file->isValid() ? "no audio stream found" : "the file's structure is invalid");
            return SHELF_TAGS_INVALID;
        }
        auto *tags = new shelf_tags();
        const TagLib::PropertyMap properties = file->properties();
        for (const auto &entry : properties) {
            if (entry.second.isEmpty()) continue;
            tags->properties.emplace_back(entry.first.to8Bit(true), utf8(entry.second));
        }
        addMP4Freeform(tags, file, properties);
        if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) {
            if (mpeg->hasID3v2Tag()) {
                addInvolvedPeople(tags, mpeg->ID3v2Tag());
                addLyricsFrames(tags, mpeg->ID3v2Tag());
            }
        } else if (auto *wav = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) {
            if (wav->hasID3v2Tag()) {
                addInvolvedPeople(tags, wav->ID3v2Tag());
                addLyricsFrames(tags, wav->ID3v2Tag());
            }
        } else if (auto *aiff = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) {
            if (aiff->hasID3v2Tag()) {
                addInvolvedPeople(tags, aiff->tag());
                addLyricsFrames(tags, aiff->tag());
            }
        }
        if (auto *audio = ref.audioProperties(); audio && hasAudio(ref)) {
            tags->length_ms = audio->lengthInMilliseconds();
            tags->bitrate = audio->bitrate();
            tags->sample_rate = audio->sampleRate();
            tags->channels = audio->channels();
            tags->bit_depth = bitDepthOf(file);
        }
        tags->id3v2_version = id3v2VersionOf(file);
        tags->codec = codecOf(file);
        readPicture(tags, file);
        addTrueAudioAPE(tags, file);
        *out = tags;
        return SHELF_TAGS_OK;
    });
}

} // namespace

extern "C" int shelf_tags_read(const char *path, shelf_tags **out, char *message, size_t message_size) {
    return readFile(path, out, message, message_size, true);
}

extern "C" int shelf_tags_read_tags(const char *path, shelf_tags **out, char *message, size_t message_size) {
    return readFile(path, out, message, message_size, false);
}

extern "C" size_t shelf_tags_count(const shelf_tags *tags) { return tags->properties.size(); }
extern "C" const char *shelf_tags_key(const shelf_tags *tags, size_t index) { return tags->properties[index].first.c_str(); }
extern "C" const char *shelf_tags_value(const shelf_tags *tags, size_t index) { return tags->properties[index].second.front().c_str(); }
extern "C" size_t shelf_tags_value_count(const shelf_tags *tags, size_t index) { return tags->properties[index].second.size(); }
extern "C" const char *shelf_tags_value_at(const shelf_tags *tags, size_t index, size_t position) {
    return tags->properties[index].second[position].c_str();
}
extern "C" int64_t shelf_tags_length_ms(const shelf_tags *tags) { return tags->length_ms; }
extern "C" int32_t shelf_tags_bitrate(const shelf_tags *tags) { return tags->bitrate; }
extern "C" int32_t shelf_tags_sample_rate(const shelf_tags *tags) { return tags->sample_rate; }
extern "C" int32_t shelf_tags_channels(const shelf_tags *tags) { return tags->channels; }
extern "C" const char *shelf_tags_codec(const shelf_tags *tags) { return tags->codec.c_str(); }
extern "C" int32_t shelf_tags_bit_depth(const shelf_tags *tags) { return tags->bit_depth; }
extern "C" int32_t shelf_tags_id3v2_version(const shelf_tags *tags) { return tags->id3v2_version; }
extern "C" const uint8_t *shelf_tags_picture(const shelf_tags *tags, size_t *size) {
    *size = tags->picture.size();
    return tags->picture.empty() ? nullptr : tags->picture.data();
}
extern "C" const char *shelf_tags_picture_mime(const shelf_tags *tags) { return tags->picture_mime.c_str(); }
extern "C" void shelf_tags_free(shelf_tags *tags) { delete tags; }

namespace {

// A value as written: several values are joined by U+001F (the unit separator), which no tag
// value holds.
TagLib::StringList valueList(const char *value) {
    TagLib::StringList list;
    if (!value) return list;
    std::string text(value);
    size_t start = 0;
    for (;;) {
        size_t end = text.find('\x1f', start);
        list.append(TagLib::String(text.substr(start, end == std::string::npos ? std::string::npos : end - start), TagLib::String::UTF8));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return list;
}

// Sets each key to its values in `properties`, or removes it where the value is null.
void applyChanges(TagLib::PropertyMap &properties, const char *const *keys, const char *const *values, size_t count) {
    for (size_t i = 0; i < count; i++) {
        TagLib::String key(keys[i], TagLib::String::UTF8);
        if (values[i]) {
            properties.replace(key, valueList(values[i]));
        } else {
            properties.erase(key);
        }
    }
}

// The description of the frames that carry one (several of these share an ID); "" for others.
TagLib::String descriptionOf(TagLib::ID3v2::Frame *frame) {
    if (auto *text = dynamic_cast<TagLib::ID3v2::UserTextIdentificationFrame *>(frame)) return text->description();
    if (auto *comment = dynamic_cast<TagLib::ID3v2::CommentsFrame *>(frame)) return comment->description();
    if (auto *lyrics = dynamic_cast<TagLib::ID3v2::UnsynchronizedLyricsFrame *>(frame)) return lyrics->description();
    if (auto *link = dynamic_cast<TagLib::ID3v2::UserUrlLinkFrame *>(frame)) return link->description();
    return TagLib::String();
}

// An MP3's tags edited frame by frame: only the frames that carry a changed key are replaced.
// Round-tripping the whole PropertyMap through setProperties, as for the other formats, drops
// what the map cannot represent exactly — a TIPL frame of involved people (producer, engineer,
// mix) disappeared from every file whose title was edited.
int writeMPEG(TagLib::MPEG::File *file, const char *const *keys, const char *const *values, size_t count, char *message,
              size_t message_size) {
    TagLib::ID3v2::Tag *tag = file->ID3v2Tag(true);
    for (size_t i = 0; i < count; i++) {
        const TagLib::String key = TagLib::String(keys[i], TagLib::String::UTF8).upper();
        // The frame the key is written as tells which frames hold it now: the same ID and, for
        // the frames a description tells apart (TXXX, COMM, USLT, WXXX), the same description.
        TagLib::ID3v2::Frame *made = TagLib::ID3v2::Frame::createTextualFrame(
            key, values[i] ? valueList(values[i]) : TagLib::StringList(TagLib::String()));
        if (!made) {
            say(message, message_size, "this format cannot store: " + key.to8Bit(true));
            return SHELF_TAGS_WRITE_FAILED;
        }
        const TagLib::String description = descriptionOf(made);
        const TagLib::ID3v2::FrameList frames = tag->frameList(made->frameID());
        for (TagLib::ID3v2::Frame *frame : frames) {
            if (descriptionOf(frame).upper() != description.upper()) continue;
            // A comment or lyrics keeps the language it was tagged in.
            if (auto *old = dynamic_cast<TagLib::ID3v2::CommentsFrame *>(frame)) {
                if (auto *now = dynamic_cast<TagLib::ID3v2::CommentsFrame *>(made)) now->setLanguage(old->language());
            } else if (auto *old = dynamic_cast<TagLib::ID3v2::UnsynchronizedLyricsFrame *>(frame)) {
                if (auto *now = dynamic_cast<TagLib::ID3v2::UnsynchronizedLyricsFrame *>(made)) now->setLanguage(old->language());
            }
            tag->removeFrame(frame, true);
        }
        if (values[i]) {
            tag->addFrame(made);
        } else {
            delete made;
        }
    }
    // An ID3v1 tag, where there is one, follows for the few fields it has (its whole map is
    // representable, so the round trip loses nothing; what it cannot hold is left out of it).
    if (file->hasID3v1Tag()) {
        TagLib::ID3v1::Tag *old = file->ID3v1Tag();
        TagLib::PropertyMap properties = old->properties();
        applyChanges(properties, keys, values, count);
        old->setProperties(properties);
    }
    return SHELF_TAGS_OK;
}

} // namespace

extern "C" int shelf_tags_write(const char *path, const char *const *keys, const char *const *values, size_t count, char *message,
                                size_t message_size) {
    return editFile(path, message, message_size, [&](TagLib::File *file) -> int {
        if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) return writeMPEG(mpeg, keys, values, count, message, message_size);
        TagLib::PropertyMap properties = file->properties();
        applyChanges(properties, keys, values, count);
        TagLib::PropertyMap rejected = file->setProperties(properties);
        if (!rejected.isEmpty()) {
            say(message, message_size, "this format cannot store: " + rejected.toString().to8Bit(true));
            return SHELF_TAGS_WRITE_FAILED;
        }
        return SHELF_TAGS_OK;
    });
}

namespace {

void setID3v2Picture(TagLib::ID3v2::Tag *tag, const uint8_t *data, size_t size, const char *mime) {
    tag->removeFrames("APIC");
    if (!data) return;
    auto *frame = new TagLib::ID3v2::AttachedPictureFrame();
    frame->setType(TagLib::ID3v2::AttachedPictureFrame::FrontCover);
    frame->setMimeType(TagLib::String(mime ? mime : "image/jpeg"));
    frame->setPicture(TagLib::ByteVector(reinterpret_cast<const char *>(data), static_cast<unsigned int>(size)));
    tag->addFrame(frame);
}

TagLib::FLAC::Picture *flacPicture(const uint8_t *data, size_t size, const char *mime) {
    auto *picture = new TagLib::FLAC::Picture();
    picture->setType(TagLib::FLAC::Picture::FrontCover);
    picture->setMimeType(TagLib::String(mime ? mime : "image/jpeg"));
    picture->setData(TagLib::ByteVector(reinterpret_cast<const char *>(data), static_cast<unsigned int>(size)));
    return picture;
}

} // namespace

extern "C" int shelf_tags_write_picture(const char *path, const uint8_t *data, size_t size, const char *mime, char *message,
                                        size_t message_size) {
    return editFile(path, message, message_size, [&](TagLib::File *file) -> int {
        if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) {
            setID3v2Picture(mpeg->ID3v2Tag(true), data, size, mime);
        } else if (auto *wav = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) {
            setID3v2Picture(wav->ID3v2Tag(), data, size, mime);
        } else if (auto *aiff = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) {
            setID3v2Picture(aiff->tag(), data, size, mime);
        } else if (auto *flac = dynamic_cast<TagLib::FLAC::File *>(file)) {
            flac->removePictures();
            if (data) flac->addPicture(flacPicture(data, size, mime));
        } else if (auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file)) {
            if (data) {
                bool png = mime && std::strcmp(mime, "image/png") == 0;
                TagLib::MP4::CoverArtList covers;
                covers.append(TagLib::MP4::CoverArt(png ? TagLib::MP4::CoverArt::PNG : TagLib::MP4::CoverArt::JPEG,
                                                    TagLib::ByteVector(reinterpret_cast<const char *>(data), static_cast<unsigned int>(size))));
                mp4->tag()->setItem("covr", covers);
            } else {
                mp4->tag()->removeItem("covr");
            }
        } else if (auto *vorbis = dynamic_cast<TagLib::Ogg::Vorbis::File *>(file)) {
            vorbis->tag()->removeAllPictures();
            if (data) vorbis->tag()->addPicture(flacPicture(data, size, mime));
        } else if (auto *opus = dynamic_cast<TagLib::Ogg::Opus::File *>(file)) {
            opus->tag()->removeAllPictures();
            if (data) opus->tag()->addPicture(flacPicture(data, size, mime));
        } else {
            say(message, message_size, "writing pictures to this format is not supported yet");
            return SHELF_TAGS_WRITE_FAILED;
        }
        return SHELF_TAGS_OK;
    });
}

#include <taglib/taglib.h>

#define SHELF_STRINGIFY2(x) #x
#define SHELF_STRINGIFY(x) SHELF_STRINGIFY2(x)

extern "C" const char *shelf_tags_taglib_version(void) {
    return SHELF_STRINGIFY(TAGLIB_MAJOR_VERSION) "." SHELF_STRINGIFY(TAGLIB_MINOR_VERSION) "." SHELF_STRINGIFY(TAGLIB_PATCH_VERSION);
}
