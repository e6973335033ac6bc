import Foundation
import ShelfCore
import ShelfDatabase

/// Facts about a library, as `shelf info` prints them.
public struct LibraryInfo: Sendable, Codable, Equatable {
    /// The library directory.
    public var path: String
    /// `PRAGMA user_version` of the store.
    public var schemaVersion: Int
    /// The store's UUID; a restored or recreated library has another one.
    public var storeID: UUID
    public var trackCount: Int
    public var artworkCount: Int
    public var playlistCount: Int
    /// Bytes of the store, its WAL files and the mirror.
    public var bytesOnDisk: Int64
}

/// One page of a sorted track list, with the total number of tracks in the list.
public struct TrackPage: Sendable, Codable, Equatable {
    public var items: [Track]
    public var total: Int
}

/// The answer to "these IDs, please": the tracks that still exist, in the order asked, and the IDs
/// that no longer do (which a syncing client treats as deleted).
public struct TrackLookup: Sendable, Codable, Equatable {
    public var tracks: [Track]
    public var missing: [TrackID]
}

/// One raw `change_log` row, as written in the same transaction as the change it describes.
public struct ChangeLogEntry: Sendable, Equatable {
    public var seq: Int64
    public var transaction: Int64
    public var objectType: ObjectType
    /// The integer ID of a track or playlist; nil for artwork.
    public var objectID: Int64?
    /// The UUID of an artwork row; nil for tracks and playlists.
    public var artworkID: ArtworkID?
    public var operation: ChangeOperation
    public var groups: PropertyGroups
}

extension Library {
    /// The library's path, schema, store ID, counts and size on disk.
    public func info() async throws -> LibraryInfo {
        let opened = try await openedStore()
        let directory = self.directory.path
        let bytes = location.bytesOnDisk()
        return try await read { db in
            try db.transaction(.deferred) {
                LibraryInfo(
                    path: directory, schemaVersion: try db.scalar(Int.self, "PRAGMA user_version") ?? 0,
                    storeID: opened.storeID,
                    trackCount: try db.scalar(Int.self, "SELECT count(*) FROM track") ?? 0,
                    artworkCount: try db.scalar(Int.self, "SELECT count(*) FROM artwork") ?? 0,
                    playlistCount: try db.scalar(Int.self, "SELECT count(*) FROM playlist") ?? 0,
                    bytesOnDisk: bytes)
            }
        }
    }

    /// The track with this ID, or nil.
    ///
    /// ```swift
    /// if let track = try await library.track(42) {
    ///     print(track.title ?? "", track.path, track.playCount)
    /// }
    /// ```
    /// A track outside the current reader's libraries (`LibraryScope.current`) is nil, as one
    /// that does not exist.
    public func track(_ id: TrackID) async throws -> Track? {
        let scope = LibraryScope.current
        let track = try await read { db in try db.queryOne(TrackRow.selectByID, [id.rawValue], TrackRow.decode) }
        guard let track, scope.contains(path: track.path) else { return nil }
        return track
    }

    /// The tracks with these IDs that still exist (in the order asked) and the IDs that do not.
    /// Without `texts`, lyrics and comment come back nil: what a list of many tracks shows
    /// without reading their longest values.
    ///
    /// ```swift
    /// let lookup = try await library.tracks(ids: [12, 13, 99], texts: false)
    /// for track in lookup.tracks { print(track.id, track.title ?? "") }
    /// print("gone:", lookup.missing)  // a syncing client drops these
    /// ```
    public func tracks(ids: [TrackID], texts: Bool = true) async throws -> TrackLookup {
        try await tracks(ids: ids, fields: texts ? .all : .withoutTexts)
    }

    /// The tracks with these IDs that still exist (in the order asked) and the IDs that do not,
    /// with the columns `fields` names (the others nil).
    /// Tracks outside the current reader's libraries (`LibraryScope.current`) are among the
    /// missing IDs, as if they did not exist.
    public func tracks(ids: [TrackID], fields: TrackFields) async throws -> TrackLookup {
        let scope = LibraryScope.current
        var lookup = try await unscopedTracks(ids: ids, fields: fields)
        guard !scope.isAll, lookup.tracks.contains(where: { !scope.contains(path: $0.path) }) else { return lookup }
        lookup.missing += lookup.tracks.filter { !scope.contains(path: $0.path) }.map(\.id)
        lookup.tracks.removeAll { !scope.contains(path: $0.path) }
        return lookup
    }

    private func unscopedTracks(ids: [TrackID], fields: TrackFields) async throws -> TrackLookup {
        // One cached statement probed per ID, in the order asked: measured at 500,500 tracks it
        // beats one `IN (json_each)` statement, whose ID order saved no page reads (a page's IDs
        // are scattered) and whose decode into a dictionary cost more than the probes.
        if fields == .song, let mirror = mirrorReaders.withLock({ $0 }) {
            // Songs from the mirror, which sync keeps in step with every write: at 500,500 tracks
            // it is 0.77 GB against the store's 3.8 GB, so a page's rows share more cached pages.
            // A track whose file is missing has no mirror row: songs lists leave it out.
            do {
                return try await mirror.read { db in try Self.probe(ids, MirrorSong.select, MirrorSong.decode, in: db) }
            } catch let error as SQLiteError where Self.isDamage(error) {
                await mirrorDamaged(mirror)
            } catch let error as SQLiteError {
                throw LibraryError.wrap(error, path: mirror.path, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
            }
        }
        let sql = fields.select + " WHERE id = ?"
        if fields == .song {
            return try await read { db in
                let found = try Self.probe(ids, sql, TrackRow.decode, in: db)
                return TrackLookup(tracks: found.tracks.map(MirrorSong.cut), missing: found.missing)
            }
        }
        return try await read { db in try Self.probe(ids, sql, TrackRow.decode, in: db) }
    }

    /// One cached statement probed per ID in one read transaction, in the order asked.
    private static func probe(_ ids: [TrackID], _ sql: String, _ decode: (Row) throws -> Track, in db: Connection) throws -> TrackLookup {
        try db.transaction(.deferred) {
            var found: [Track] = []
            found.reserveCapacity(ids.count)
            var missing: [TrackID] = []
            for id in ids {
                if let track = try db.queryOne(sql, [id.rawValue], decode) { found.append(track) } else { missing.append(id) }
            }
            return TrackLookup(tracks: found, missing: missing)
        }
    }

    /// When each of these tracks was added (a track that does not exist has no entry): one
    /// statement reading one column, for lists that show a date per row and nothing else of it.
    public func dateAdded(of ids: [TrackID]) async throws -> [TrackID: Date] {
        guard !ids.isEmpty else { return [:] }
        let list = "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
        return try await read { db in
            var result: [TrackID: Date] = [:]
            try db.forEachRow("SELECT id, date_added FROM track WHERE id IN (SELECT value FROM json_each(?))", [list]) { row in
                result[TrackID(try row.int64(0))] = try row.get(1) as Date
            }
            return result
        }
    }

    /// Every playlist and folder, by ID.
    public func playlists() async throws -> [Playlist] {
        try await read { db in try db.query(PlaylistRow.select + " ORDER BY id", [], PlaylistRow.decode) }
    }

    /// A playlist's items in playlist order (a track may appear more than once).
    public func playlistItems(_ id: PlaylistID) async throws -> [TrackID] {
        try await read { db in
            guard try db.scalar(Int.self, "SELECT 1 FROM playlist WHERE id = ?", [id.rawValue]) != nil else {
                throw LibraryError.playlistNotFound(id)
            }
            return try db.query("SELECT track_id FROM playlist_item WHERE playlist_id = ? ORDER BY position", [id.rawValue]) {
                TrackID(try $0.int64(0))
            }
        }
    }

    /// The bytes of a stored picture, or nil when no artwork has this ID.
    public func artworkData(_ id: ArtworkID) async throws -> Data? {
        try await read { db in try db.scalar(Data.self, "SELECT data FROM artwork WHERE id = ?", [id.rawValue]) }
    }

    /// Raw change-log rows after `seq`, oldest first: the low-level feed under the history API.
    public func changeLog(afterSeq seq: Int64 = 0, limit: Int = 10_000) async throws -> [ChangeLogEntry] {
        try await read { db in
            try db.query(
                "SELECT seq, tx, object_type, object_id, op, groups FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?",
                [seq, limit]
            ) { row in
                let type = ObjectType(rawValue: Int(try row.int64(2))) ?? .track
                let isArtwork = type == .artwork
                return ChangeLogEntry(
                    seq: try row.int64(0), transaction: try row.int64(1), objectType: type,
                    objectID: isArtwork ? nil : try row.int64(3),
                    artworkID: isArtwork ? ArtworkID(try row.get(3, as: UUID.self)) : nil,
                    operation: ChangeOperation(rawValue: Int(try row.int64(4))) ?? .update,
                    groups: PropertyGroups(rawValue: Int(try row.int64(5))))
            }
        }
    }
}

/// Which columns a lookup of many tracks reads; the rest come back nil.
public enum TrackFields: Sendable, Equatable {
    /// Every field.
    case all
    /// All but lyrics and comment.
    case withoutTexts
    /// What a protocol's song shows (Subsonic's Child): no lyrics, composer, artist sort tags,
    /// audio hash, track and disc counts or file time; blank sort tags nil; dates to the whole
    /// second. Read from the mirror when it is on, else from the store and cut to the same.
    case song

    var select: String {
        switch self {
        case .all: TrackRow.select
        case .withoutTexts: TrackRow.selectWithoutTexts
        case .song: TrackRow.selectForSongs
        }
    }
}
