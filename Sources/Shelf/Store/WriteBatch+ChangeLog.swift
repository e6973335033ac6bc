import CCrypto
import Foundation
import ShelfCore
import ShelfDatabase

/// What a batch records of its changes: one change-log row per object, collapsed, written just
/// before the commit.
extension WriteBatch {
    func record(_ key: ObjectKey, _ operation: ChangeOperation, _ groups: PropertyGroups = []) {
        guard let existing = pending[key] else {
            pending[key] = PendingChange(operation: operation, groups: operation == .update ? groups : [])
            order.append(key)
            return
        }
        switch (existing.operation, operation) {
        case (.insert, .delete): pending[key] = nil
        case (.insert, _): break
        case (.update, .update): pending[key]?.groups.formUnion(groups)
        case (_, .delete): pending[key] = PendingChange(operation: .delete, groups: [])
        default: pending[key] = PendingChange(operation: operation, groups: groups)
        }
    }

    /// Logs an update of `id` in `groups` for data kept beside the track row (a user's star, rating
    /// or plays). The mirror is given the row as unchanged, so it neither reads it back nor
    /// recomputes anything for it.
    func recordTrackSideData(_ id: TrackID, _ groups: PropertyGroups) throws {
        if let state = trackStates[id] {
            guard state.after != nil else { throw LibraryError.trackNotFound(id) }
        } else {
            guard let current = try track(id) else { throw LibraryError.trackNotFound(id) }
            trackStates[id] = TrackState(before: current, beforeKnown: true, after: current)
        }
        record(.track(id), .update, groups)
    }

    /// Logs a user's saved play queue made, replaced or cleared.
    func recordPlayQueue(_ user: UserID, _ operation: ChangeOperation) {
        record(.playQueue(user), operation)
    }

    /// Logs an update of a playlist made outside its own row (who owns it).
    func recordPlaylistSideData(_ id: PlaylistID, _ groups: PropertyGroups) {
        record(.playlist(id), .update, groups)
    }

    /// Collects unused artwork, then writes one `change_transaction` row and the collapsed
    /// `change_log` rows; called once, inside the transaction, just before it commits.
    func finish() throws {
        for artwork in artworkToCollect {
            try db.execute(
                """
                DELETE FROM artwork WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM track WHERE artwork_id = ?1)
                  AND NOT EXISTS (SELECT 1 FROM artist_picture WHERE artwork_id = ?1)
                """,
                [artwork.rawValue])
            if db.changes > 0 { record(.artwork(artwork), .delete) }
        }
        let rows = order.compactMap { key in pending[key].map { (key, $0) } }
        guard !rows.isEmpty else { return }
        try db.execute("INSERT INTO change_transaction (committed_at) VALUES (?)", [now])
        let tx = db.lastInsertRowID
        let statement = try db.cachedStatement(
            "INSERT INTO change_log (tx, object_type, object_id, op, groups) VALUES (?, ?, ?, ?, ?)")
        for (key, change) in rows {
            statement.reset()
            try statement.bind(tx, at: 1)
            try statement.bind(Int64(key.type.rawValue), at: 2)
            switch key {
            case .track(let id): try statement.bind(id.rawValue, at: 3)
            case .playlist(let id): try statement.bind(id.rawValue, at: 3)
            case .artwork(let id): try statement.bind(id.rawValue.rawBytes, at: 3)
            case .playQueue(let id): try statement.bind(id.rawValue, at: 3)
            }
            try statement.bind(Int64(change.operation.rawValue), at: 4)
            try statement.bind(Int64(change.groups.rawValue), at: 5)
            try statement.run()
        }
        let membershipStatement = try db.cachedStatement(
            "INSERT INTO playlist_item_log (tx, playlist_id, track_id, delta) VALUES (?, ?, ?, ?)")
        for (playlist, deltas) in membership {
            for (track, delta) in deltas where delta != 0 {
                try membershipStatement.bind([tx, playlist.rawValue, track.rawValue, delta])
                try membershipStatement.run()
            }
        }
        let groupStatement = try db.cachedStatement("INSERT OR IGNORE INTO group_log (tx, kind, group_id) VALUES (?, ?, ?)")
        for group in touchedGroups {
            try groupStatement.bind([tx, group.kind, group.id])
            try groupStatement.run()
        }
        pending.removeAll()
        order.removeAll()
        membership.removeAll()
        touchedGroups.removeAll()
    }
}

/// An album or album artist a transaction touched, by its view kind code and ID.
struct LoggedGroup: Hashable {
    let kind: Int64
    let id: Int64

    /// The album and the album artist `track` files under (the IDs Subsonic's albumId and artistId carry).
    static func groups(of track: Track) -> [LoggedGroup] {
        let ids = Library.groupIDs(of: track)
        return [
            LoggedGroup(kind: GroupKind.album.code, id: ids.album?.rawValue ?? 0),
            LoggedGroup(kind: GroupKind.albumArtist.code, id: ids.albumArtist?.rawValue ?? 0),
        ]
        .filter { $0.id != 0 }
    }
}

struct PendingChange {
    var operation: ChangeOperation
    var groups: PropertyGroups
}

/// How a `Playlist` maps to a `playlist` row.
enum PlaylistRow {
    static let select = "SELECT id, name, parent_id, kind, rules, date_added, date_modified, comment FROM playlist"

    static func decode(_ row: Row) throws -> Playlist {
        Playlist(
            id: PlaylistID(try row.int64(0)), name: try row.string(1),
            parentID: row.optionalInt64(2).map { PlaylistID($0) }, kind: Playlist.Kind(rawValue: Int(try row.int64(3))) ?? .regular,
            rules: row.optionalString(4), comment: row.optionalString(7), dateAdded: try row.get(5), dateModified: try row.get(6))
    }
}
