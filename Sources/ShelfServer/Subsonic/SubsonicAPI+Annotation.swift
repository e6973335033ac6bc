import Foundation
import Shelf
import ShelfCore

/// Media annotation: stars, ratings and plays, each one write through `ServerContext.write`.
extension SubsonicAPI {
    /// star/unstar: songs, albums and artists, per user; an unknown ID of any of them is error 70
    /// and stars nothing.
    func star(_ call: SubsonicCall, _ starred: Bool) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        // `id` may name a song, album or artist (folder-browsing apps star directories by it).
        var tracks: [TrackID] = []
        var albums: [GroupID] = []
        var artists: [GroupID] = []
        for (name, text) in p.values("id").map({ ("id", $0) }) + p.values("albumId").map({ ("albumId", $0) }) + p.values("artistId").map({ ("artistId", $0) }) {
            switch (name, SubsonicID(text)) {
            case ("id", .track(let id)?): tracks.append(id)
            case ("id", .album(let id)?), ("albumId", .album(let id)?): albums.append(try await albumItem(id).id)
            case ("id", .artist(let id)?), ("artistId", .artist(let id)?): artists.append(try await artistItem(id).id)
            default: throw SubsonicError.notFound("\(name == "id" ? "song, album or artist" : name == "albumId" ? "album" : "artist") '\(text)' (\(name))")
            }
        }
        guard !tracks.isEmpty || !albums.isEmpty || !artists.isEmpty else { throw SubsonicError.missing("id") }
        try await context.write { [tracks, albums, artists] batch in
            if !tracks.isEmpty { try batch.setStarred(tracks, by: user.id, starred) }
            if !albums.isEmpty { try batch.setGroupsStarred(albums, kind: .album, by: user.id, starred) }
            if !artists.isEmpty { try batch.setGroupsStarred(artists, kind: .albumArtist, by: user.id, starred) }
        }
        return .empty
    }

    /// setRating: 1–5 stars, 0 removes the rating.
    func setRating(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let id = try call.parameters.trackID()
        guard let rating = try call.parameters.int("rating", in: 0...5) else { throw SubsonicError.missing("rating") }
        try await context.write { batch in try batch.setRating(id, by: user.id, rating == 0 ? nil : rating * 20) }
        return .empty
    }

    /// scrobble: `submission=false` is "now playing", which Shelf does not record; a submission
    /// counts a play at `time` (milliseconds) or now.
    func scrobble(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let texts = p.values("id")
        guard !texts.isEmpty else { throw SubsonicError.missing("id") }
        let ids = try texts.map { text throws(SubsonicError) in try SubsonicParameters.track(text, "id") }
        let times = try p.values("time").map { text throws(SubsonicError) in
            guard let ms = Int64(text), ms >= 0 else { throw SubsonicError.invalid("time", text, "milliseconds since 1970") }
            return Date(timeIntervalSince1970: TimeInterval(ms) / 1000)
        }
        guard try p.bool("submission") ?? true else {
            for id in ids where try await library.track(id) == nil { throw SubsonicError.notFound("song tr-\(id)") }
            // "Now playing": the last song named, shown by getNowPlaying, never counted as a play.
            if let last = ids.last { nowPlaying.record(last, user: user, player: p.value("c") ?? "") }
            return .empty
        }
        try await context.write { batch in
            for (index, id) in ids.enumerated() { try batch.recordPlay(id, by: user.id, at: index < times.count ? times[index] : Date()) }
        }
        return .empty
    }
}
