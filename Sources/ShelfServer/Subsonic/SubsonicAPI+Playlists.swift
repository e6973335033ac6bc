import Foundation
import Shelf
import ShelfCore

/// Playlists: list, read, create, update and delete, under the engine's visibility rules.
extension SubsonicAPI {
    /// Playlist `id` as `user` may read it (the engine's rule, as on `/api/`), or error 70;
    /// folders are not playlists here.
    func visiblePlaylist(_ id: PlaylistID, _ user: User) async throws -> VisiblePlaylist {
        guard let visible = try await library.visiblePlaylist(id, for: user), visible.playlist.kind != .folder else {
            throw SubsonicError.notFound("playlist pl-\(id)")
        }
        return visible
    }

    /// Throws 50 unless `user` may change playlist `id`; smart playlists are read-only here.
    func ownedPlaylist(_ id: PlaylistID, _ user: User) async throws {
        let visible = try await visiblePlaylist(id, user)
        guard visible.canChange else { throw SubsonicError(50, "playlist pl-\(id) belongs to someone else") }
        if visible.playlist.kind == .smart {
            throw SubsonicError(50, "playlist pl-\(id) is a smart playlist; change its rules with shelf")
        }
    }

    /// The playlist model of `visible`; `songs` makes it getPlaylist's, with its entries.
    func playlistModel(_ visible: VisiblePlaylist, users: [UserID: String], songs: [SubsonicSong]? = nil) async throws -> SubsonicPlaylist {
        let playlist = visible.playlist
        let items = try await library.playlistTracks(playlist)
        let ownership = visible.ownership
        let tracks = try await library.tracks(ids: Array(items.prefix(10_000)), texts: false).tracks
        let duration = tracks.reduce(0.0) { $0 + ($1.duration ?? 0) }
        return SubsonicPlaylist(
            id: playlist.id, name: playlist.name, owner: ownership?.user.flatMap { users[$0] } ?? "",
            isPublic: ownership?.user == nil || ownership?.isPublic == true, songCount: items.count, duration: Int(duration.rounded()),
            comment: playlist.comment, created: playlist.dateAdded, changed: playlist.dateModified, hasCover: tracks.contains { $0.artworkID != nil },
            readOnly: playlist.kind == .smart, entries: songs)
    }

    /// Every user's name by ID (playlists name their owner).
    func userNames() async throws -> [UserID: String] {
        Dictionary(try await library.users().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// getPlaylists: the playlists the user may see.
    func getPlaylists(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let users = try await userNames()
        var playlists: [SubsonicPlaylist] = []
        for visible in try await library.visiblePlaylists(for: user) where visible.playlist.kind != .folder {
            playlists.append(try await playlistModel(visible, users: users))
        }
        return .container("playlists", "playlist", playlists)
    }

    /// The playlist ID of parameter `name`, or error 70.
    func playlistID(_ call: SubsonicCall, _ name: String = "id") throws(SubsonicError) -> PlaylistID {
        guard case .playlist(let id) = try call.parameters.id(name) else { throw SubsonicError.notFound("playlist '\(call.parameters.value(name) ?? "")'") }
        return id
    }

    /// getPlaylist: one playlist with its songs.
    func getPlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        try await playlistReply(try playlistID(call), try call.signedIn)
    }

    /// The getPlaylist answer for playlist `id` (createPlaylist answers it too).
    func playlistReply(_ id: PlaylistID, _ user: User) async throws -> SubsonicReply {
        let visible = try await visiblePlaylist(id, user)
        let songs = try await self.songs(try await library.playlistTracks(visible.playlist), for: user)
        return .element("playlist", try await playlistModel(visible, users: try await userNames(), songs: songs))
    }

    /// The song IDs of every value of `name`.
    func songIDs(_ call: SubsonicCall, _ name: String) throws(SubsonicError) -> [TrackID] {
        try call.parameters.values(name).map { text throws(SubsonicError) in try SubsonicParameters.track(text, name) }
    }

    /// createPlaylist: a new one (`name`), or the songs of `playlistId` replaced.
    func createPlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.playlist, of: user, for: "edit playlists")
        let songs = try songIDs(call, "songId")
        for id in songs where try await library.track(id) == nil { throw SubsonicError.notFound("song tr-\(id)") }
        if call.parameters.has("playlistId") {
            let id = try playlistID(call, "playlistId")
            try await ownedPlaylist(id, user)
            let comment = call.parameters.value("comment")
            try await context.write { batch in
                try batch.setPlaylistItems(id, songs)
                let name = call.parameters.value("name").flatMap { $0.isEmpty ? nil : $0 }
                if name != nil || comment != nil, var playlist = try batch.playlist(id) {
                    if let name { playlist.name = name }
                    if let comment { playlist.comment = comment }
                    try batch.updatePlaylist(playlist)
                }
            }
            return try await playlistReply(id, user)
        }
        let name = (try call.parameters.required("name")).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 500 else { throw SubsonicError(0, "name must be 1 to 500 characters") }
        let comment = call.parameters.value("comment")
        let id = try await context.write { batch in
            let id = try batch.createPlaylist(Playlist(name: name, comment: comment))
            try batch.setPlaylistOwner(id, user.id, public: false)
            try batch.appendToPlaylist(id, songs)
            return id
        }
        return try await playlistReply(id, user)
    }

    /// updatePlaylist: name, comment (an empty one clears it), public, songs added and removed
    /// by their 0-based positions.
    func updatePlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.playlist, of: user, for: "edit playlists")
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
        let name = p.value("name").flatMap { $0.isEmpty ? nil : $0 }
        let comment = p.value("comment")
        let owner = try await library.playlistOwners()[id]
        try await context.write { batch in
            if name != nil || comment != nil, var playlist = try batch.playlist(id) {
                if let name { playlist.name = name }
                if let comment { playlist.comment = comment }
                try batch.updatePlaylist(playlist)
            }
            if !remove.isEmpty { try batch.removeFromPlaylist(id, at: Array(Set(remove))) }
            if !add.isEmpty { try batch.appendToPlaylist(id, add) }
            if let makePublic { try batch.setPlaylistOwner(id, owner?.user ?? user.id, public: makePublic) }
        }
        return .empty
    }

    /// deletePlaylist.
    func deletePlaylist(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.playlist, of: user, for: "edit playlists")
        let id = try playlistID(call)
        try await ownedPlaylist(id, user)
        try await context.write { batch in try batch.deletePlaylist(id) }
        return .empty
    }
}
