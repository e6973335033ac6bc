import Foundation
import Shelf
import ShelfCore

/// Lyrics from the tags, songs by genre, top songs, and the endpoints whose honest answer is
/// empty (now playing, artist and album info, similar songs): Shelf keeps no such data.
extension SubsonicAPI {
    static let extras: [String: Endpoint] = [
        "getLyricsBySongId": { api, call in try await api.lyricsBySongID(call) },
        "getLyrics": { api, call in try await api.lyrics(call) },
        "getSongsByGenre": { api, call in
            let p = call.parameters
            let genre = try p.required("genre")
            let count = try p.int("count", default: 10, in: 0...500) ?? 10
            let offset = try p.int("offset", default: 0, in: 0...Int(Int32.max)) ?? 0
            let genreFilter = Filter.text(.genre, .equals(genre))
            let filter = try api.folderFilter(p).map { Filter.and([genreFilter, $0]) } ?? genreFilter
            let ids = try await api.trackRows(LibraryQuery(sort: .albumArtist, filter: filter), offset: offset, limit: count)
            return .elements([SubsonicElement("songsByGenre", children: try await api.songs(ids, for: try call.signedIn))])
        },
        "getTopSongs": { api, call in
            let p = call.parameters
            let artist = try p.required("artist")
            let count = try p.int("count", default: 50, in: 0...500) ?? 50
            let query = LibraryQuery(sort: .playCount, descending: true,
                                     filter: .and([.or([.text(.artist, .equals(artist)), .text(.albumArtist, .equals(artist))]), .range(.playCount, lower: 1, upper: nil)]))
            let ids = try await api.trackRows(query, offset: 0, limit: count)
            return .elements([SubsonicElement("topSongs", children: try await api.songs(ids, for: try call.signedIn))])
        },
        "getNowPlaying": { _, _ in .elements([SubsonicElement("nowPlaying")]) },
        // Shelf has no biographies or notes: the bodies are empty, for an artist or album that exists.
        "getArtistInfo2": { api, call in
            guard case .artist(let id) = try call.parameters.id() else { throw SubsonicError.notFound("artist '\(call.parameters.value("id") ?? "")'") }
            _ = try await api.artistItem(id)
            return .elements([SubsonicElement("artistInfo2")])
        },
        "getAlbumInfo2": { api, call in try await api.albumInfo(call) },
        "getAlbumInfo": { api, call in try await api.albumInfo(call) },
        "getSimilarSongs2": { api, call in try await api.similarSongs(call) },
    ]

    /// getAlbumInfo(2): an empty `albumInfo` for an album that exists.
    func albumInfo(_ call: SubsonicCall) async throws -> SubsonicReply {
        guard case .album(let id) = try call.parameters.id() else { throw SubsonicError.notFound("album '\(call.parameters.value("id") ?? "")'") }
        _ = try await albumItem(id)
        return .elements([SubsonicElement("albumInfo")])
    }

    /// getSimilarSongs2: up to `count` songs, in random order, of the genre the artist's albums
    /// have most, by other album artists (Shelf knows no similarity beyond its tags).
    func similarSongs(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        guard case .artist(let id) = try p.id() else { throw SubsonicError.notFound("artist '\(p.value("id") ?? "")'") }
        let count = try p.int("count", default: 50, in: 0...500) ?? 50
        let artist = try await artistItem(id)
        let albums = try await groupRows(GroupQuery(kind: .album, artist: id), offset: 0, limit: 1_000)
        let genres = Dictionary(albums.compactMap(\.genre).map { ($0, 1) }, uniquingKeysWith: +)
        guard let genre = genres.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key })?.key, count > 0 else {
            return .elements([SubsonicElement("similarSongs2")])
        }
        let others = Filter.and([.text(.genre, .equals(genre)), .not(.text(.albumArtist, .equals(artist.name)))])
        let ids = Array(try await library.snapshot(LibraryQuery(filter: others)).shuffled().prefix(count))
        return .elements([SubsonicElement("similarSongs2", children: try await songs(ids, for: try call.signedIn))])
    }

    /// `[mm:ss.xx]text` lines (LRC) as (milliseconds, text); nil when the lyrics are plain.
    static func syncedLines(_ lyrics: String) -> [(Int, String)]? {
        var lines: [(Int, String)] = []
        for raw in lyrics.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            var rest = Substring(raw)
            var stamps: [Int] = []
            while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                let stamp = rest[rest.index(after: rest.startIndex)..<close]
                let parts = stamp.split(separator: ":")
                guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Double(parts[1]) else { break }
                stamps.append(minutes * 60_000 + Int((seconds * 1000).rounded()))
                rest = rest[rest.index(after: close)...]
            }
            for stamp in stamps { lines.append((stamp, String(rest))) }
        }
        return lines.isEmpty ? nil : lines.sorted { $0.0 < $1.0 }
    }

    func lyricsBySongID(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let id = try call.parameters.trackID()
        guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
        guard let lyrics = track.lyrics, !lyrics.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return .elements([SubsonicElement("lyricsList")])
        }
        let synced = Self.syncedLines(lyrics)
        let lines: [SubsonicElement] = synced.map { lines in
            lines.map { SubsonicElement("line", repeated: true, [("start", .int($0.0))], text: $0.1) }
        } ?? lyrics.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            SubsonicElement("line", repeated: true, text: String($0))
        }
        let structured = SubsonicElement(
            "structuredLyrics", repeated: true,
            [("displayArtist", track.artist.map { .string($0) }), ("displayTitle", track.title.map { .string($0) }),
             ("lang", .string("xxx")), ("synced", .bool(synced != nil)), ("offset", .int(0))],
            children: lines)
        return .elements([SubsonicElement("lyricsList", children: [structured])])
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
        guard !filters.isEmpty else { return .elements([SubsonicElement("lyrics", text: "")]) }
        let ids = try await library.list(LibraryQuery(sort: .title, filter: .and(filters)), limit: 20).items.map(\.id)
        let tracks = try await library.tracks(ids: ids).tracks
        guard let track = tracks.first(where: { !($0.lyrics ?? "").isEmpty }), let text = track.lyrics else {
            return .elements([SubsonicElement("lyrics", [("artist", .string(artist)), ("title", .string(title))], text: "")])
        }
        let plain = Self.syncedLines(text).map { $0.map(\.1).joined(separator: "\n") } ?? text
        return .elements([SubsonicElement("lyrics", [("artist", track.artist.map { .string($0) }), ("title", track.title.map { .string($0) })], text: plain)])
    }
}
