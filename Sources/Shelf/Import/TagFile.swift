import CTagLib
import Foundation
import ShelfCore

/// Why a file's tags could not be read or written; always names the file.
public enum TagError: ClassifiedError, Equatable {
    /// A file that cannot be read is the file's fault; a failed save is the machine's.
    public var kind: ErrorKind {
        switch self {
        case .unreadable, .invalid: .invalid
        case .writeFailed: .internal
        }
    }

    /// "unreadableFile", "invalidAudioFile" or "tagWriteFailed".
    public var errorCode: String {
        switch self {
        case .unreadable: "unreadableFile"
        case .invalid: "invalidAudioFile"
        case .writeFailed: "tagWriteFailed"
        }
    }

    /// Not an audio file TagLib understands, or it cannot be opened.
    case unreadable(path: String, reason: String)
    /// An audio file whose structure is damaged.
    case invalid(path: String, reason: String)
    /// Saving failed; the file is as it was (TagLib writes in place only after its checks).
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .invalid(let path, let reason): "invalid audio file \(path): \(reason)"
        case .writeFailed(let path, let reason): "cannot write tags to \(path): \(reason)"
        }
    }
}

/// What an audio file says about itself: its tags by TagLib's unified keys, audio properties and
/// the preferred embedded picture.
public struct AudioFileTags: Sendable, Equatable {
    /// Unified property keys (TITLE, ARTIST, ALBUMARTIST, TITLESORT, TRACKNUMBER "3/12", LYRICS, …)
    /// to their first value.
    public var properties: [String: String]
    public var durationMilliseconds: Int
    public var bitrate: Int
    public var sampleRate: Int
    public var channels: Int
    /// "mp3", "aac", "alac", "flac", "vorbis", "opus", "pcm", "wavpack", "ape", "wma", "tta"; through
    /// ffprobe also "ac3", "eac3", "dsd", "mod", "xm", "s3m", "it" or ffmpeg's codec name; or "".
    public var codec: String
    public var picture: Data?
    public var pictureMimeType: String?
    /// The keys that hold more than one value, to all of them in the file's order (a key with one
    /// value is only in `properties`).
    public var lists: [String: [String]] = [:]
    /// Bits per sample of a lossless stream; 0 when the format has none or does not say.
    public var bitDepth = 0
    /// An MP3's ID3v2 major version (3 or 4), else 0: 2.3 joins a list's values with "/".
    public var id3v2Version = 0
    /// Every lyrics text the tags hold: each ID3v2 lyrics frame with its language, else each value
    /// of a repeated `LYRICS` field (`properties["LYRICS"]` is the first of them).
    public var embeddedLyrics: [LyricsText] = []

    /// Every value of `key`, in the file's order; empty when the file has none.
    public func values(_ key: String) -> [String] {
        if let list = lists[key] { return list }
        return properties[key].map { [$0] } ?? []
    }

    /// The tags as a `Track` for `path` (file size and date fields left to the caller).
    public func track(path: String, separators: TagSeparators = .standard) -> Track {
        reading(path: path, separators: separators).track
    }

    /// The track, and what in the tags was malformed and left out (each naming the tag).
    func reading(path: String, separators: TagSeparators) -> (track: Track, problems: [String]) {
        var track = displayTrack(path: path)
        let (details, problems) = details(separators: separators)
        track.details = details
        return (track, problems)
    }

    /// Joins the several values of a display credit tag: `;` is a name separator (`TagSeparators`),
    /// so the joined credit splits back into the same names when it is edited or exported.
    public static let creditSeparator = "; "

    private func displayTrack(path: String) -> Track {
        func text(_ key: String) -> String? {
            guard let value = properties[key], !SortKey.isBlank(value) else { return nil }
            return value
        }
        /// A display credit: several values of the tag (Vorbis `ARTIST` twice, an ID3v2.4 `TPE1`
        /// list) with no joined credit beside them name every one, joined by `creditSeparator`.
        func credit(_ key: String) -> String? {
            guard let values = lists[key]?.filter({ !SortKey.isBlank($0) }), values.count > 1 else { return text(key) }
            return values.joined(separator: Self.creditSeparator)
        }
        /// A count or number as tags write them: digits only (`Int` also takes a sign, and
        /// shelf-fuzz found "-1" becoming track −1 and "-999" year −999).
        func whole(_ text: Substring) -> Int? {
            let digits = text.trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(digits)
        }
        /// "3/12" → (3, 12); "3" → (3, nil).
        func pair(_ key: String) -> (Int?, Int?) {
            guard let value = properties[key] else { return (nil, nil) }
            let parts = value.split(separator: "/", maxSplits: 1).map(whole)
            return (parts.first ?? nil, parts.count > 1 ? parts[1] : nil)
        }
        let (trackNumber, trackCount) = pair("TRACKNUMBER")
        let (discNumber, discCount) = pair("DISCNUMBER")
        let year = properties["DATE"].flatMap { whole($0.prefix(4)) }
        let compilation = ["1", "true", "yes"].contains(properties["COMPILATION"]?.lowercased() ?? "")
        return Track(
            path: path, title: text("TITLE"), artist: credit("ARTIST"), album: text("ALBUM"), albumArtist: text("ALBUMARTIST"),
            composer: text("COMPOSER"), genre: text("GENRE"), year: year, trackNumber: trackNumber, trackCount: trackCount,
            discNumber: discNumber, discCount: discCount,
            duration: durationMilliseconds > 0 ? Double(durationMilliseconds) / 1000 : nil,
            bitrate: bitrate > 0 ? bitrate : nil, sampleRate: sampleRate > 0 ? sampleRate : nil, channels: channels > 0 ? channels : nil,
            codec: codec.isEmpty ? nil : codec, compilation: compilation, comment: text("COMMENT"), lyrics: text("LYRICS"),
            sortTitle: text("TITLESORT"), sortArtist: credit("ARTISTSORT"), sortAlbum: text("ALBUMSORT"),
            sortAlbumArtist: text("ALBUMARTISTSORT"), sortComposer: text("COMPOSERSORT"))
    }
}

/// Reading and writing tags through TagLib (`CTagLib`).
public enum TagFile {
    /// Joins the values of a list written with `write`.
    public static let listSeparator = MetadataChanges.listSeparator

    /// Reads a file's tags, audio properties and picture.
    public static func read(_ url: URL) throws(TagError) -> AudioFileTags {
        try read(url, requireAudio: true)
    }

    /// Tags and picture of a file TagLib opens even when it cannot decode its stream (audio
    /// properties then 0): what `AudioFile` keeps beside ffprobe's reading of the stream.
    static func readTags(_ url: URL) throws(TagError) -> AudioFileTags {
        try read(url, requireAudio: false)
    }

    private static func read(_ url: URL, requireAudio: Bool) throws(TagError) -> AudioFileTags {
        var message = [CChar](repeating: 0, count: 256)
        var handle: OpaquePointer?
        let status =
            requireAudio
            ? shelf_tags_read(url.path, &handle, &message, message.count)
            : shelf_tags_read_tags(url.path, &handle, &message, message.count)
        guard status == SHELF_TAGS_OK, let handle else { throw error(Int32(status), url.path, message) }
        defer { shelf_tags_free(handle) }
        var properties: [String: String] = [:]
        var lists: [String: [String]] = [:]
        for index in 0..<shelf_tags_count(handle) {
            let key = String(cString: shelf_tags_key(handle, index))
            properties[key] = String(cString: shelf_tags_value(handle, index))
            let count = shelf_tags_value_count(handle, index)
            if count > 1 { lists[key] = (0..<count).map { String(cString: shelf_tags_value_at(handle, index, $0)) } }
        }
        var size = 0
        let picture = shelf_tags_picture(handle, &size).map { Data(bytes: $0, count: size) }
        let mime = String(cString: shelf_tags_picture_mime(handle))
        var embedded: [LyricsText] = []
        if let frames = lists.removeValue(forKey: Self.lyricsFrames) ?? properties[Self.lyricsFrames].map({ [$0] }) {
            for frame in frames {
                let parts = frame.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, !SortKey.isBlank(String(parts[1])) else { continue }
                let lang = parts[0].trimmingCharacters(in: .whitespaces.union(.controlCharacters)).lowercased()
                embedded.append(LyricsText(lang: lang == "xxx" ? "" : lang, source: "embedded", text: String(parts[1])))
            }
        } else if let values = lists["LYRICS"] ?? properties["LYRICS"].map({ [$0] }) {
            embedded = values.filter { !SortKey.isBlank($0) }.map { LyricsText(lang: "", source: "embedded", text: $0) }
        }
        properties[Self.lyricsFrames] = nil
        return AudioFileTags(
            properties: properties, durationMilliseconds: Int(shelf_tags_length_ms(handle)), bitrate: Int(shelf_tags_bitrate(handle)),
            sampleRate: Int(shelf_tags_sample_rate(handle)), channels: Int(shelf_tags_channels(handle)),
            codec: String(cString: shelf_tags_codec(handle)), picture: picture, pictureMimeType: picture == nil || mime.isEmpty ? nil : mime,
            lists: lists, bitDepth: Int(shelf_tags_bit_depth(handle)), id3v2Version: Int(shelf_tags_id3v2_version(handle)),
            embeddedLyrics: embedded)
    }

    /// The shim's key for ID3v2 lyrics frames (language, U+0001, text), which is no tag's name.
    static let lyricsFrames = "SHELF:USLT"

    /// Sets (a value) or removes (nil) properties by unified key and saves the file in place; a
    /// value holding U+001F (`TagFile.listSeparator`) is several values, written as the format
    /// writes lists (ID3v2.4 NUL-separated, repeated Vorbis fields, MP4 and APE lists).
    public static func write(_ url: URL, _ changes: [String: String?]) throws(TagError) {
        try refuseForeign(url)
        let keys = changes.keys.sorted()
        var message = [CChar](repeating: 0, count: 256)
        let cKeys = keys.map { strdup($0) }
        let cValues = keys.map { key in changes[key]!.map { strdup($0) } ?? nil }
        defer {
            cKeys.forEach { free($0) }
            cValues.forEach { free($0) }
        }
        let status = cKeys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
            cValues.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { valuePointers in
                shelf_tags_write(url.path, keyPointers.baseAddress, valuePointers.baseAddress, keys.count, &message, message.count)
            }
        }
        guard status == SHELF_TAGS_OK else { throw error(Int32(status), url.path, message) }
    }

    /// Replaces the embedded pictures with one front cover, or removes them (nil).
    public static func writePicture(_ url: URL, _ picture: Data?, mimeType: String = "image/jpeg") throws(TagError) {
        try refuseForeign(url)
        var message = [CChar](repeating: 0, count: 256)
        let status: Int32
        if let picture {
            status = picture.withUnsafeBytes { bytes in
                shelf_tags_write_picture(url.path, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, mimeType, &message, message.count)
            }
        } else {
            status = shelf_tags_write_picture(url.path, nil, 0, nil, &message, message.count)
        }
        guard status == SHELF_TAGS_OK else { throw error(status, url.path, message) }
    }

    /// TagLib 1.13 may take a Matroska or DSD file for a format it knows and would then write
    /// into it as that format: those files are left as they are.
    private static func refuseForeign(_ url: URL) throws(TagError) {
        guard AudioLayout.foreignToTagLib(url) else { return }
        throw .writeFailed(path: url.path, reason: "Shelf reads this format through ffprobe and cannot write its tags")
    }

    private static func error(_ status: Int32, _ path: String, _ message: [CChar]) -> TagError {
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch status {
        case Int32(SHELF_TAGS_UNREADABLE): return .unreadable(path: path, reason: reason)
        case Int32(SHELF_TAGS_INVALID): return .invalid(path: path, reason: reason)
        default: return .writeFailed(path: path, reason: reason)
        }
    }
}
