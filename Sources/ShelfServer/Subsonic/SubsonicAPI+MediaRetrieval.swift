import Foundation
import Shelf
import ShelfCore

/// Media retrieval: stream, download, cover art and lyrics.
extension SubsonicAPI {
    /// `stream`: the file itself (ranges and all) unless a transcode is asked for by `format`
    /// or a `maxBitRate` below the file's (then mp3, which every player takes); `timeOffset` seeks a transcode.
    /// The original file goes only to a user with the download role: others always get a
    /// transcode (mp3), and `format=raw` is refused (error 50).
    func stream(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.stream, of: user, for: "stream")
        let originals = user.may(.download)
        let p = call.parameters
        let idText = try p.required("id")
        let episode = try await episodeSource(idText)
        var maxBitRate = try p.int("maxBitRate", default: 0, in: 0...10_000) ?? 0
        // The user's own limit caps what the client asks for (0 on either side: no limit there).
        if user.maxBitRate > 0 { maxBitRate = maxBitRate == 0 ? user.maxBitRate : min(maxBitRate, user.maxBitRate) }
        let timeOffset = try p.int("timeOffset", default: 0, in: 0...86_400) ?? 0
        let formatText = p.value("format") ?? ""
        let source: StreamResponder.Source
        if let episode {
            source = episode
        } else {
            let id = try SubsonicParameters.track(idText, "id")
            guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
            source = StreamResponder.Source(track)
        }
        var format: StreamResponder.TranscodeFormat?
        // A preset of the config file (`format=mobile`) names a format and its bit rate.
        let preset = context.streams.presets[formatText]
        switch formatText {
        case _ where preset != nil: format = preset?.format
        case "raw":
            guard originals else { throw Self.noOriginals }
            format = nil
        case "": format = (maxBitRate > 0 && maxBitRate < (source.bitRate ?? Int.max)) || timeOffset > 0 ? .mp3 : nil
        case "ogg", "oga": format = .opus
        case "m4a": format = .aac
        default:
            guard let known = StreamResponder.TranscodeFormat(rawValue: formatText) else {
                throw SubsonicError.invalid("format", formatText, "raw, opus, mp3, aac or flac")
            }
            format = known
        }
        if format == nil && !originals { format = .mp3 }
        guard let format else { return .binary(try context.streams.file(source, request: call.http)) }
        let bitRate = maxBitRate > 0 ? min(320, max(32, maxBitRate)) : preset?.bitRate ?? 192
        let estimate = try call.parameters.bool("estimateContentLength") ?? false
        return .binary(try context.streams.transcode(source, format: format, bitRate: bitRate, timeOffset: Double(timeOffset), estimateLength: estimate))
    }

    /// `getCoverArt`: the picture of a song, album, artist or playlist (its first track with one).
    func coverArt(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let size = try p.int("size", default: 600, in: 1...100_000) ?? 600
        if let picture = try await podcastPicture(try p.required("id")) {
            return .binary(try await context.artwork.respond(file: picture, size: size, ifNoneMatch: call.http.headers["if-none-match"]))
        }
        let artwork: ArtworkID?
        switch try p.id() {
        case .track(let id):
            guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
            artwork = track.artworkID
        case .album(let id): artwork = try await albumItem(id).artworkID
        case .artist(let id): artwork = try await artistItem(id).artworkID
        case .playlist(let id):
            let items = try await library.playlistTracks(try await visiblePlaylist(id, user).playlist)
            artwork = try await library.tracks(ids: Array(items.prefix(50))).tracks.lazy.compactMap(\.artworkID).first
        case .folder(let id): artwork = try await library.folder(id)?.folder.artworkID
        }
        guard let artwork else { throw SubsonicError.notFound("cover art of '\(p.value("id") ?? "")'") }
        return .binary(
            try await context.artwork.respond(
                artwork, size: size, format: .jpeg, ifNoneMatch: call.http.headers["if-none-match"], cacheControl: "private, max-age=3600"))
    }

    /// The refusal of an original file to a user who may stream but not download.
    static let noOriginals = SubsonicError(
        50, "this user may stream but not download original files: ask for a format (or no format, for mp3), or for the download role")

    /// download: the file as it is, ranges and all.
    func download(_ call: SubsonicCall) async throws -> SubsonicReply {
        try Self.require(.download, of: try call.signedIn, for: "download files")
        if let episode = try await episodeSource(try call.parameters.required("id")) { return .binary(try context.streams.file(episode, request: call.http)) }
        return .binary(try await context.streams.file(try call.parameters.trackID(), request: call.http))
    }

    /// `[mm:ss.xx]text` lines (LRC) as (milliseconds, text); nil when the lyrics are plain.
    static func syncedLines(_ lyrics: String) -> [(Int, String)]? {
        var lines: [(Int, String)] = []
        for raw in lyrics.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            var rest = Substring(raw)
            var stamps: [Int] = []
            while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                guard let stamp = lrcTime(rest[rest.index(after: rest.startIndex)..<close]) else { break }
                stamps.append(stamp)
                rest = rest[rest.index(after: close)...]
            }
            for stamp in stamps { lines.append((stamp, String(rest))) }
        }
        return lines.isEmpty ? nil : lines.sorted { $0.0 < $1.0 }
    }

    /// An LRC file's `[la:ja]` language and `[offset:+250]` milliseconds (positive: the lines come
    /// sooner, as LRC means it; the spec's `offset` has the same sign).
    static func lrcHeader(_ lyrics: String) -> (lang: String?, offset: Int?) {
        var lang: String?
        var offset: Int?
        for raw in lyrics.split(whereSeparator: \.isNewline).prefix(40) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("["), line.hasSuffix("]"), let colon = line.firstIndex(of: ":") else { continue }
            let name = line[line.index(after: line.startIndex)..<colon].lowercased()
            let value = line[line.index(after: colon)..<line.index(before: line.endIndex)].trimmingCharacters(in: .whitespaces)
            if name == "la", !value.isEmpty { lang = value }
            if name == "offset", let number = Int(value.hasPrefix("+") ? String(value.dropFirst()) : value) { offset = number }
        }
        return (lang, offset)
    }

    /// `mm:ss.xx` as milliseconds; nil unless minutes and seconds are plain numbers in range (a
    /// file's `nan`, `inf` or `1e300` is text, not a time).
    static func lrcTime(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 5, let minutes = Int(parts[0]), minutes >= 0,
            parts[1].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let seconds = Double(parts[1]),
            seconds.isFinite, seconds >= 0, seconds < 60
        else { return nil }
        return minutes * 60_000 + Int((seconds * 1000).rounded())
    }

    /// An enhanced-LRC line (`<mm:ss.xx>word <mm:ss.xx>word`) as its text without the word stamps
    /// and its timed words, each with the UTF-8 offset where it starts in that text; a plain line
    /// gives itself and no words.
    static func wordTimings(_ line: String) -> (text: String, words: [(start: Int, byte: Int, text: String)], trailing: Int?) {
        var text = ""
        var words: [(start: Int, byte: Int, text: String)] = []
        var trailing: Int?
        var rest = Substring(line)
        while !rest.isEmpty {
            if rest.hasPrefix("<"), let close = rest.firstIndex(of: ">"), let time = lrcTime(rest[rest.index(after: rest.startIndex)..<close]) {
                rest = rest[rest.index(after: close)...]
                let next = rest.firstIndex(of: "<") ?? rest.endIndex
                let word = String(rest[..<next])
                if word.isEmpty {
                    trailing = time
                } else {
                    words.append((time, text.utf8.count, word))
                    text += word
                }
                rest = rest[next...]
            } else {
                let next = rest.dropFirst().firstIndex(of: "<") ?? rest.endIndex
                text += rest[..<next]
                rest = rest[next...]
            }
        }
        return (text, words, trailing)
    }

    /// getLyricsBySongId (songLyrics): the song's lyrics as structured lines, synced when they are
    /// LRC; with `enhanced=true` (version 2) the layer's `kind` and, for enhanced LRC, each line's
    /// timed words as `cueLine`s. Every text the song has is its own entry: the one it shows, then
    /// each other language of its tags and the file beside it (`Library.lyricsTexts`), each with
    /// the language it was tagged in (or its LRC header's).
    func lyricsBySongID(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let enhanced = try call.parameters.bool("enhanced") ?? false
        let id = try call.parameters.trackID()
        guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
        let texts = try await library.lyricsTexts(of: track)
        let entries = texts.enumerated().map { index, text in
            Self.structuredLyrics(text.text, lang: text.lang, kind: index == 0 ? "main" : "translation", of: track, enhanced: enhanced)
        }
        return .container("lyricsList", "structuredLyrics", entries)
    }

    /// One lyrics text as a `structuredLyrics` entry (`kind` only for songLyrics version 2).
    static func structuredLyrics(_ lyrics: String, lang: String, kind: String, of track: Track, enhanced: Bool) -> SubsonicStructuredLyrics {
        let synced = Self.syncedLines(lyrics)
        let header = Self.lrcHeader(lyrics)
        let timed = synced?.map { (start: $0.0, Self.wordTimings($0.1)) }
        let lines =
            timed.map { lines in
                lines.map { SubsonicLyricLine(start: $0.start, text: $0.1.text) }
            } ?? lyrics.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { SubsonicLyricLine(text: String($0)) }
        var structured = SubsonicStructuredLyrics(displayArtist: track.artist, displayTitle: track.title, synced: synced != nil, lines: lines)
        if enhanced {
            structured.kind = kind
            let timedLines = timed ?? []
            // The last word of the song ends with the song when nothing after it says when.
            let songEnd = track.duration.flatMap { $0.isFinite && $0 > 0 && $0 < 1e7 ? Int($0 * 1000) : nil }
            for (index, line) in timedLines.enumerated() where !line.1.words.isEmpty {
                let nextLine = index + 1 < timedLines.count ? timedLines[index + 1].start : songEnd
                var cues: [SubsonicCueLine.Cue] = []
                let words = line.1.words
                // Every cue of a line has an end, or none has (the spec's rule): none when the last is unknown.
                let lastEnd = line.1.trailing ?? nextLine
                for (number, word) in words.enumerated() {
                    let end = number + 1 < words.count ? words[number + 1].start : lastEnd
                    // The cue is the word without the spaces around it; its bytes are where it stands in the line.
                    let trimmed = word.text.trimmingCharacters(in: .whitespaces)
                    guard !trimmed.isEmpty else { continue }
                    let lead = word.text.utf8.count - word.text.drop(while: { $0 == " " }).utf8.count
                    cues.append(
                        SubsonicCueLine.Cue(
                            start: word.start, end: lastEnd == nil ? nil : max(word.start, end ?? word.start), byteStart: word.byte + lead,
                            byteEnd: word.byte + lead + trimmed.utf8.count - 1, value: trimmed))
                }
                structured.cueLines.append(SubsonicCueLine(index: index, start: line.start, end: cues.last?.end, value: line.1.text, cues: cues))
            }
        }
        // The tagged language first (an ID3v2 frame's), else the LRC header's.
        if !lang.isEmpty {
            structured.lang = lang
        } else if let lang = header.lang {
            structured.lang = lang
        }
        if synced != nil, let offset = header.offset { structured.offset = offset }
        return structured
    }

    /// getLyrics (artist, title): the first matching song's plain lyrics.
    func lyrics(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let p = call.parameters
        let artist = p.value("artist") ?? ""
        let title = p.value("title") ?? ""
        var filters: [Filter] = []
        if !artist.isEmpty { filters.append(.text(.artist, .equals(artist))) }
        if !title.isEmpty { filters.append(.text(.title, .equals(title))) }
        // No lyrics found is an empty text, which clients' models require, not a missing one.
        guard !filters.isEmpty else { return .element("lyrics", SubsonicLyrics(text: "")) }
        let ids = try await library.list(LibraryQuery(sort: .title, filter: .and(filters)), limit: 20).items.map(\.id)
        let tracks = try await library.tracks(ids: ids).tracks
        guard let track = tracks.first(where: { !($0.lyrics ?? "").isEmpty }), let text = track.lyrics else {
            return .element("lyrics", SubsonicLyrics(artist: artist, title: title, text: ""))
        }
        let plain = Self.syncedLines(text).map { $0.map(\.1).joined(separator: "\n") } ?? text
        return .element("lyrics", SubsonicLyrics(artist: track.artist, title: track.title, text: plain))
    }
}
