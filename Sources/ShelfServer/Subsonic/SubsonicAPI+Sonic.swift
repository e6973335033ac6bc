import Foundation
import Shelf
import ShelfCore

/// The OpenSubsonic `sonicSimilarity` extension (getSonicSimilarTracks, findSonicPath) and the
/// similar-songs endpoints, answered from Shelf's own analysis.
extension SubsonicAPI {
    /// getSonicSimilarTracks: `id` a song, `count` (default 10, up to 500) neighbours, most
    /// similar first; an empty list for a song not analysed yet.
    func sonicSimilarTracks(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let id = try p.trackID()
        let count = try p.int("count", default: 10, in: 0...500) ?? 10
        let matches = try await sonic { try await library.similarTracks(to: id, count: count) }
        return try await sonicReply(matches, for: try call.signedIn)
    }

    /// findSonicPath: from `startSongId` to `endSongId`, at most `count` (default 25) songs, both
    /// ends included; similarity is to the start song.
    func findSonicPath(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let start = try p.trackID("startSongId")
        let end = try p.trackID("endSongId")
        let count = try p.int("count", default: 25, in: 1...500) ?? 25
        let path = try await sonic { try await library.sonicPath(from: start, to: end, count: count) }
        return try await sonicReply(path, for: try call.signedIn)
    }

    /// Runs a similarity read, a song that does not exist being error 70.
    private func sonic(_ body: () async throws -> [SonicMatch]) async throws -> [SonicMatch] {
        do {
            return try await body()
        } catch LibraryError.trackNotFound(let id) {
            throw SubsonicError.notFound("song 'tr-\(id.rawValue)'")
        }
    }

    private func sonicReply(_ matches: [SonicMatch], for user: User) async throws -> SubsonicReply {
        let songs = Dictionary(try await songs(matches.map(\.track), for: user).map { ($0.track.id, $0) }, uniquingKeysWith: { a, _ in a })
        let entries = matches.compactMap { match in songs[match.track].map { SubsonicSonicMatch(entry: $0, similarity: match.similarity) } }
        return .body { $0.requiredList("sonicMatch", entries) }
    }

    /// getSimilarSongs(2): `id` an artist, album or song. With analysis, the songs that sound
    /// most like the song (or like the album's or the artist's songs, a few neighbours of each),
    /// other albums and artists first; without it, random songs of the artist's main genre by
    /// other album artists.
    func similarSongs(_ call: SubsonicCall, element: String) async throws -> SubsonicReply {
        let p = call.parameters
        let count = try p.int("count", default: 50, in: 0...500) ?? 50
        let user = try call.signedIn
        let seeds: [TrackID]
        let artistName: String
        switch try p.id() {
        case .track(let id):
            guard let track = try await library.track(id) else { throw SubsonicError.notFound("song '\(p.value("id") ?? "")'") }
            seeds = [id]
            artistName = track.albumArtist ?? track.artist ?? ""
        case .album(let id):
            _ = try await albumItem(id)
            let tracks = try await library.albumTracks(id)
            seeds = tracks.map(\.id)
            artistName = tracks.first.map { $0.albumArtist ?? $0.artist ?? "" } ?? ""
        case .artist(let id):
            artistName = try await artistItem(id).name
            let named = try await library.snapshot(
                LibraryQuery(filter: .or([.text(.albumArtist, .equals(artistName)), .text(.artist, .equals(artistName))])))
            seeds = try await library.tracks(named, creditedTo: id)
        default:
            throw SubsonicError.notFound("artist, album or song '\(p.value("id") ?? "")'")
        }
        guard count > 0 else { return .element(element, SubsonicEmpty()) }
        var ids = try await library.similarTracks(toAll: seeds, count: count).map(\.track)
        if ids.isEmpty {
            ids = try await genreFallback(artist: artistName, count: count)
        }
        return .container(element, "song", try await songs(ids, for: user))
    }

    /// The fallback without analysis: random songs of the genre the artist's albums have most,
    /// by other album artists.
    private func genreFallback(artist: String, count: Int) async throws -> [TrackID] {
        let albums = try await library.snapshot(LibraryQuery(filter: .text(.albumArtist, .equals(artist))))
        let tracks = try await library.tracks(ids: Array(albums.prefix(2_000)), fields: .withoutTexts).tracks
        let genres = Dictionary(tracks.compactMap(\.genre).map { ($0, 1) }, uniquingKeysWith: +)
        guard let genre = genres.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key })?.key else { return [] }
        let others = Filter.and([.text(.genre, .equals(genre)), .not(.text(.albumArtist, .equals(artist)))])
        return try await library.snapshot(LibraryQuery(filter: others)).randomSample(count)
    }
}

/// One `sonicMatch`: the song as `entry` and its `similarity`.
struct SubsonicSonicMatch: SubsonicModel {
    let entry: SubsonicSong
    let similarity: Double

    func write(to w: inout SubsonicWriter) {
        w.attribute("similarity", similarity)
        w.element("entry", entry)
    }
}
