import Foundation
import ShelfCore
import ShelfDatabase

/// Who may see and change a playlist: one rule for every front end (the native API, Subsonic,
/// the page). The library's own playlists are everyone's to read; a user's are theirs, or
/// everyone's to read when public; admins read and change all.
extension PlaylistOwnership {
    /// Whether `user` may see a playlist of this ownership (nil: a library playlist).
    public static func canSee(_ ownership: PlaylistOwnership?, _ user: User) -> Bool {
        guard let ownership, let owner = ownership.user else { return true }
        return owner == user.id || ownership.isPublic || user.isAdmin
    }

    /// Whether `user` may change a playlist of this ownership: their own; the library's and
    /// others' only as an admin.
    public static func canChange(_ ownership: PlaylistOwnership?, _ user: User) -> Bool {
        user.isAdmin || ownership?.user == user.id
    }
}

/// One playlist as one user may read it: the playlist, whose it is, and whether they may change it.
public struct VisiblePlaylist: Sendable {
    public var playlist: Playlist
    /// Nil for a library playlist.
    public var ownership: PlaylistOwnership?
    /// Whether the reader may change it (`PlaylistOwnership.canChange`).
    public var canChange: Bool
}

extension Library {
    /// The playlists and folders `user` may see, in ID order.
    public func visiblePlaylists(for user: User) async throws -> [VisiblePlaylist] {
        let owners = try await playlistOwners()
        return try await playlists().compactMap { playlist in
            let ownership = owners[playlist.id]
            guard PlaylistOwnership.canSee(ownership, user) else { return nil }
            return VisiblePlaylist(playlist: playlist, ownership: ownership, canChange: PlaylistOwnership.canChange(ownership, user))
        }
    }

    /// Playlist `id` as `user` may read it; nil when there is none or it is not theirs to see
    /// (the two look alike, so a playlist's existence is not told to those who may not see it).
    public func visiblePlaylist(_ id: PlaylistID, for user: User) async throws -> VisiblePlaylist? {
        try await visiblePlaylists(for: user).first { $0.playlist.id == id }
    }
}

extension Library {
    /// The tracks of `playlist` in order: a smart playlist's rule evaluated now, a plain one's
    /// items (a track may appear twice), a folder's none.
    public func playlistTracks(_ playlist: Playlist) async throws -> [TrackID] {
        switch playlist.kind {
        case .smart: try await smartPlaylistTracks(playlist.id)
        case .folder: []
        case .regular: try await visible(try await playlistItems(playlist.id))
        }
    }

    /// `ids` without the tracks the current reader may not see (`LibraryScope.current`), in order.
    public func visible(_ ids: [TrackID]) async throws -> [TrackID] {
        let scope = LibraryScope.current
        guard !scope.isAll, !ids.isEmpty else { return ids }
        let roots = scope.roots ?? []
        let list = "[" + Set(ids.map(\.rawValue)).map(String.init).joined(separator: ",") + "]"
        let shown = try await read { db in
            let (condition, arguments) = Self.underRoots(roots)
            return Set(
                try db.query("SELECT id FROM track WHERE id IN (SELECT value FROM json_each(?)) AND \(condition)", [list as (any SQLiteBindable)?] + arguments)
                { try $0.int64(0) })
        }
        return ids.filter { shown.contains($0.rawValue) }
    }
}
