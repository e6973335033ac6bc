import Foundation
import Shelf
import ShelfCore

/// Media, annotation and playlists.
extension SubsonicAPI {
    // MARK: Media

    /// `stream`: the file itself (ranges and all) unless a transcode is asked for by `format`
    /// or a `maxBitRate` below the file's (then mp3, which every player takes); `timeOffset` seeks a transcode.
    func stream(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let p = call.parameters
        let id = try p.trackID()
        let maxBitRate = try p.int("maxBitRate", default: 0, in: 0...10_000) ?? 0
        let timeOffset = try p.int("timeOffset", default: 0, in: 0...86_400) ?? 0
        let formatText = p.value("format") ?? ""
        guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
        var format: StreamResponder.TranscodeFormat?
        // A preset of the config file (`format=mobile`) names a format and its bit rate.
        let preset = context.streams.presets[formatText]
        switch formatText {
        case _ where preset != nil: format = preset?.format
        case "raw": format = nil
        case "": format = (maxBitRate > 0 && maxBitRate < (track.bitrate ?? Int.max)) || timeOffset > 0 ? .mp3 : nil
        case "ogg", "oga": format = .opus
        case "m4a": format = .aac
        default:
            guard let known = StreamResponder.TranscodeFormat(rawValue: formatText) else {
                throw SubsonicError.invalid("format", formatText, "raw, opus, mp3, aac or flac")
            }
            format = known
        }
        guard let format else { return .binary(try await context.streams.file(id, request: call.http)) }
        let bitRate = maxBitRate > 0 ? min(320, max(32, maxBitRate)) : preset?.bitRate ?? 192
        let estimate = try call.parameters.bool("estimateContentLength") ?? false
        return .binary(try await context.streams.transcode(id, format: format, bitRate: bitRate, timeOffset: Double(timeOffset), estimateLength: estimate))
    }

    /// `getCoverArt`: the picture of a song, album, artist or playlist (its first track with one).
    func coverArt(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let size = try p.int("size", default: 600, in: 1...100_000) ?? 600
        let artwork: ArtworkID?
        switch try p.id() {
        case .track(let id):
            guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
            artwork = track.artworkID
        case .album(let id): artwork = try await albumItem(id).artworkID
        case .artist(let id): artwork = try await artistItem(id).artworkID
        case .playlist(let id):
            try await visiblePlaylist(id, user)
            let items = try await library.playlistItems(id)
            artwork = try await library.tracks(ids: Array(items.prefix(50))).tracks.lazy.compactMap(\.artworkID).first
        }
        guard let artwork else { throw SubsonicError.notFound("cover art of '\(p.value("id") ?? "")'") }
        return .binary(try await context.artwork.respond(
            artwork, size: size, format: .jpeg, ifNoneMatch: call.http.headers["if-none-match"], cacheControl: "private, max-age=3600"))
    }

    // MARK: Annotation

    func write<T: Sendable>(_ body: @escaping @LibraryActor @Sendable (WriteBatch) throws -> T) async throws -> T {
        let result = try await library.write(body)
        context.events.poke()
        return result
    }

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
        try await write { [tracks, albums, artists] batch in
            if !tracks.isEmpty { try batch.setStarred(tracks, by: user.id, starred) }
            if !albums.isEmpty { try batch.setGroupsStarred(albums, kind: .album, by: user.id, starred) }
            if !artists.isEmpty { try batch.setGroupsStarred(artists, kind: .albumArtist, by: user.id, starred) }
        }
        return .empty
    }

    func setRating(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let id = try call.parameters.trackID()
        guard let rating = try call.parameters.int("rating", in: 0...5) else { throw SubsonicError.missing("rating") }
        try await write { batch in try batch.setRating(id, by: user.id, rating == 0 ? nil : rating * 20) }
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
            return .empty
        }
        try await write { batch in
            for (index, id) in ids.enumerated() { try batch.recordPlay(id, by: user.id, at: index < times.count ? times[index] : Date()) }
        }
        return .empty
    }

    // MARK: Playlists

    /// Throws 70 unless `user` may see playlist `id` (the same rule as `/api/`).
    func visiblePlaylist(_ id: PlaylistID, _ user: User) async throws {
        let owners = try await library.playlistOwners()
        guard try await library.playlists().contains(where: { $0.id == id && $0.kind != .folder }), NativeAPI.canSee(owners[id], user) else {
            throw SubsonicError.notFound("playlist pl-\(id)")
        }
    }

    /// Throws 50 unless `user` may change playlist `id`; smart playlists are read-only here.
    func ownedPlaylist(_ id: PlaylistID, _ user: User) async throws {
        try await visiblePlaylist(id, user)
        guard NativeAPI.canChange(try await library.playlistOwners()[id], user) else {
            throw SubsonicError(50, "playlist pl-\(id) belongs to someone else")
        }
        if try await library.playlists().first(where: { $0.id == id })?.kind == .smart {
            throw SubsonicError(50, "playlist pl-\(id) is a smart playlist; change its rules with shelf")
        }
    }

    func playlistElement(_ playlist: Playlist, owners: [PlaylistID: PlaylistOwnership], users: [UserID: String], songs: [SubsonicElement]? = nil) async throws -> SubsonicElement {
        let items = playlist.kind == .smart ? try await library.smartPlaylistTracks(playlist.id) : try await library.playlistItems(playlist.id)
        let ownership = owners[playlist.id]
        let tracks = try await library.tracks(ids: Array(items.prefix(10_000))).tracks
        let duration = tracks.reduce(0.0) { $0 + ($1.duration ?? 0) }
        let cover = tracks.first { $0.artworkID != nil }.map { _ in SubsonicID.playlist(playlist.id).description }
        return SubsonicElement(
            "playlist", repeated: songs == nil,
            [("id", .string(SubsonicID.playlist(playlist.id).description)), ("name", .string(playlist.name)),
             ("owner", .string(ownership?.user.flatMap { users[$0] } ?? "")), ("public", .bool(ownership?.user == nil || ownership?.isPublic == true)),
             ("songCount", .int(items.count)), ("duration", .int(Int(duration.rounded()))),
             ("created", .string(Self.iso(playlist.dateAdded))), ("changed", .string(Self.iso(playlist.dateModified))),
             ("coverArt", cover.map { .string($0) }), ("readonly", playlist.kind == .smart ? .bool(true) : nil)],
            children: songs ?? [])
    }

    func userNames() async throws -> [UserID: String] {
        Dictionary(try await library.users().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    func getPlaylists(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let owners = try await library.playlistOwners()
        let users = try await userNames()
        var elements: [SubsonicElement] = []
        for playlist in try await library.playlists() where playlist.kind != .folder && NativeAPI.canSee(owners[playlist.id], user) {
            elements.append(try await playlistElement(playlist, owners: owners, users: users))
        }
        return .elements([SubsonicElement("playlists", children: elements)])
    }

    func playlistID(_ call: SubsonicCall, _ name: String = "id") throws(SubsonicError) -> PlaylistID {
        guard case .playlist(let id) = try call.parameters.id(name) else { throw SubsonicError.notFound("playlist '\(call.parameters.value(name) ?? "")'") }
        return id
    }

    func getPlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let id = try playlistID(call)
        try await visiblePlaylist(id, user)
        return try await playlistReply(id, user)
    }

    func playlistReply(_ id: PlaylistID, _ user: User) async throws -> SubsonicReply {
        guard let playlist = try await library.playlists().first(where: { $0.id == id }) else { throw SubsonicError.notFound("playlist pl-\(id)") }
        let items = playlist.kind == .smart ? try await library.smartPlaylistTracks(id) : try await library.playlistItems(id)
        let songs = try await self.songs(items, for: user, name: "entry")
        return .elements([try await playlistElement(playlist, owners: try await library.playlistOwners(), users: try await userNames(), songs: songs)])
    }

    func songIDs(_ call: SubsonicCall, _ name: String) throws(SubsonicError) -> [TrackID] {
        try call.parameters.values(name).map { text throws(SubsonicError) in try SubsonicParameters.track(text, name) }
    }

    /// createPlaylist: a new one (`name`), or the songs of `playlistId` replaced.
    func createPlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let songs = try songIDs(call, "songId")
        for id in songs where try await library.track(id) == nil { throw SubsonicError.notFound("song tr-\(id)") }
        if call.parameters.has("playlistId") {
            let id = try playlistID(call, "playlistId")
            try await ownedPlaylist(id, user)
            try await write { batch in
                try batch.setPlaylistItems(id, songs)
                if let name = call.parameters.value("name"), !name.isEmpty, var playlist = try batch.playlist(id) {
                    playlist.name = name
                    try batch.updatePlaylist(playlist)
                }
            }
            return try await playlistReply(id, user)
        }
        let name = (try call.parameters.required("name")).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 500 else { throw SubsonicError(0, "name must be 1 to 500 characters") }
        let id = try await write { batch in
            let id = try batch.createPlaylist(Playlist(name: name))
            try batch.setPlaylistOwner(id, user.id, public: false)
            try batch.appendToPlaylist(id, songs)
            return id
        }
        return try await playlistReply(id, user)
    }

    /// updatePlaylist: name, comment (ignored: Shelf playlists have none), public, songs added
    /// and removed by their 0-based positions.
    func updatePlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let id = try playlistID(call, "playlistId")
        try await ownedPlaylist(id, user)
        let add = try songIDs(call, "songIdToAdd")
        for song in add where try await library.track(song) == nil { throw SubsonicError.notFound("song tr-\(song)") }
        let count = try await library.playlistItems(id).count
        let remove = try p.values("songIndexToRemove").map { text throws(SubsonicError) in
            guard let index = Int(text), (0..<count).contains(index) else {
                throw SubsonicError.invalid("songIndexToRemove", text, "a position from 0 to \(count - 1)")
            }
            return index
        }
        let makePublic = try p.bool("public")
        let name = p.value("name")
        let owner = try await library.playlistOwners()[id]
        try await write { batch in
            if let name, !name.isEmpty, var playlist = try batch.playlist(id) {
                playlist.name = name
                try batch.updatePlaylist(playlist)
            }
            if !remove.isEmpty { try batch.removeFromPlaylist(id, at: Array(Set(remove))) }
            if !add.isEmpty { try batch.appendToPlaylist(id, add) }
            if let makePublic { try batch.setPlaylistOwner(id, owner?.user ?? user.id, public: makePublic) }
        }
        return .empty
    }

    func deletePlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let id = try playlistID(call)
        try await ownedPlaylist(id, user)
        try await write { batch in try batch.deletePlaylist(id) }
        return .empty
    }
}
