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
            if let last = ids.last {
                nowPlaying.record(last, user: user, player: p.value("c") ?? "")
                context.scrobbler.playing(last, user: user.id, client: p.value("c") ?? "")
            }
            return .empty
        }
        // A listen reportPlayback already counted is not counted again.
        var counted: [(TrackID, Date)] = []
        for (index, id) in ids.enumerated() {
            guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
            let date = index < times.count ? times[index] : Date()
            if listens.scrobble(user: user.id, track: id, duration: track.duration, at: date) { counted.append((id, date)) }
        }
        let client = p.value("c") ?? ""
        try await context.write { [counted] batch in
            for (id, date) in counted { try batch.recordPlay(id, by: user.id, at: date, source: .scrobble, client: client) }
        }
        return .empty
    }

    /// reportPlayback (the `playbackReport` extension): `mediaId`, `mediaType` song, `positionMs`,
    /// `state` starting|playing|paused|stopped, `playbackRate`, `ignoreScrobble`. Now playing
    /// follows the state; a play is counted once per listen by the rule of `SubsonicListens`.
    func reportPlayback(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let id = try SubsonicParameters.track(try p.required("mediaId"), "mediaId")
        let type = try p.required("mediaType")
        guard type == "song" else {
            throw type == "podcast"
                ? SubsonicError.notFound("podcast episode '\(p.value("mediaId") ?? "")'") : SubsonicError.invalid("mediaType", type, "song or podcast")
        }
        guard let position = try p.int("positionMs", in: 0...Int(Int64.max)) else { throw SubsonicError.missing("positionMs") }
        let state = try p.required("state")
        guard ["starting", "playing", "paused", "stopped"].contains(state) else {
            throw SubsonicError.invalid("state", state, "starting, playing, paused or stopped")
        }
        if let rate = p.value("playbackRate"), !(Double(rate).map { $0 > 0 && $0 <= 16 } ?? false) {
            throw SubsonicError.invalid("playbackRate", rate, "a number above 0 and at most 16")
        }
        let ignore = try p.bool("ignoreScrobble") ?? false
        guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
        let client = p.value("c") ?? ""
        if state == "stopped" { nowPlaying.remove(user.id) } else { nowPlaying.record(id, user: user, player: client) }
        let report = listens.report(
            user: user.id, track: id, state: state, position: position, duration: track.duration,
            countable: !ignore)
        if report.started, !ignore { context.scrobbler.playing(id, user: user.id, client: client) }
        if report.counted, let started = report.startedAt {
            // The page's own player reports as "Shelf web …": its listens are told from apps'.
            let source: ListenSource = client.hasPrefix("Shelf web ") ? .page : .playbackReport
            _ = try await context.write { batch in
                try batch.recordPlay(id, by: user.id, at: started, heard: Double(position) / 1000, source: source, client: client)
            }
        }
        return .empty
    }
}
