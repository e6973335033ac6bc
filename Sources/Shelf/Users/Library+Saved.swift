import Foundation
import ShelfCore
import ShelfDatabase

/// Reading bookmarks, radio stations and shares, and which albums and artists changed since a token.
extension Library {
    /// `user`'s bookmarks, most recently changed first.
    public func bookmarks(of user: UserID) async throws -> [Bookmark] {
        try await read { db in
            try db.query(
                "SELECT user_id, track_id, position, comment, created, changed FROM bookmark WHERE user_id = ? ORDER BY changed DESC, track_id",
                [user.rawValue]
            ) {
                Bookmark(
                    user: UserID(try $0.int64(0)), track: TrackID(try $0.int64(1)), position: Int(try $0.int64(2)),
                    comment: try $0.string(3), created: try $0.get(4), changed: try $0.get(5))
            }
        }
    }

    /// The library's internet radio stations, by name.
    public func radioStations() async throws -> [RadioStation] {
        try await read { db in try db.query(SavedRows.selectStation + " ORDER BY name COLLATE NOCASE, id", [], SavedRows.decodeStation) }
    }

    /// The shares `user` made (every share when nil), newest first, with their tracks.
    public func shares(of user: UserID?) async throws -> [Share] {
        try await read { db in
            try db.transaction(.deferred) {
                let shares =
                    try user.map {
                        try db.query(SavedRows.selectShare + " WHERE user_id = ? ORDER BY id DESC", [$0.rawValue], SavedRows.decodeShare)
                    } ?? db.query(SavedRows.selectShare + " ORDER BY id DESC", [], SavedRows.decodeShare)
                return try shares.map { try Self.withItems($0, db) }
            }
        }
    }

    /// The share with this ID, or nil.
    public func share(_ id: SavedID) async throws -> Share? {
        try await read { db in
            try db.transaction(.deferred) {
                try db.queryOne(SavedRows.selectShare + " WHERE id = ?", [id.rawValue], SavedRows.decodeShare).map { try Self.withItems($0, db) }
            }
        }
    }

    /// The share whose link carries `token`, or nil (an unknown token is just not found; the
    /// lookup is by the unique index, so its time does not depend on how much of a token matched).
    public func share(token: String) async throws -> Share? {
        guard token.utf8.count <= 64 else { return nil }
        return try await read { db in
            try db.transaction(.deferred) {
                try db.queryOne(SavedRows.selectShare + " WHERE token = ?", [token], SavedRows.decodeShare).map { try Self.withItems($0, db) }
            }
        }
    }

    private static func withItems(_ share: Share, _ db: Connection) throws -> Share {
        var share = share
        share.tracks = try db.query("SELECT track_id FROM share_item WHERE share_id = ? ORDER BY position", [share.id.rawValue]) {
            TrackID(try $0.int64(0))
        }
        return share
    }

    /// The albums (`kind` .album) or album artists (.albumArtist) whose tracks were added, changed
    /// or removed in the transactions after `from` up to `through`, each once; the cost grows with
    /// the number of transactions and groups, not with the library.
    public func touchedGroups(kind: GroupKind, after from: Int64, through: Int64) async throws -> [GroupID] {
        try await read { db in
            try db.int64Column(
                "SELECT DISTINCT group_id FROM group_log WHERE tx > ? AND tx <= ? AND kind = ? ORDER BY group_id",
                [from, through, kind.code]
            ).map { GroupID($0) }
        }
    }

    /// The transaction `group_log` starts after (the last one before the store reached schema 8).
    public func groupLogStart() async throws -> Int64 {
        try await read { db in Int64(try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'group_log_start'") ?? "0") ?? 0 }
    }

    /// When transaction `tx` committed (nil for 0 or a compacted one).
    public func commitDate(ofTransaction tx: Int64) async throws -> Date? {
        try await read { db in
            try db.queryOne("SELECT committed_at FROM change_transaction WHERE id = ?", [tx]) { try $0.get(0) as Date }
        }
    }
}
