import Foundation
import ShelfCore
import ShelfDatabase

/// Schema 14 → 15: group keys carry names' identity, so names that only sorting folds alike
/// (ひかる and ヒカル, "Björk" and "Bjork", "The Beatles" and "Beatles") are different albums and
/// artists, and some groups get a new ID. What the store keeps by group ID follows: stars and
/// `artist.*` pictures move to the group that holds most of the old group's tracks, and
/// `group_log` restarts, so a change token from before learns the groups again.
///
/// Schema 16 → 17 does the same for albums whose tracks carry a MusicBrainz release ID, which
/// their keys now end with (`SortKey.withRelease`): two releases of one name are two albums.
/// Schema 17 → 18 for artists whose tracks carry a MusicBrainz artist ID (`SortKey.withArtistID`):
/// two artists of one name are two artists, and their albums two albums.
enum IdentityMigration {
    /// Moves what the store keeps by group ID from the IDs the groups had under `before` (the
    /// key a group had before the change) to the ones they have now.
    static func apply(_ db: Connection, before: (GroupKey) -> GroupKey = \.beforeIdentity) throws {
        let (moves, changed) = try self.moves(db, before: before)
        for (old, new) in moves {
            // A user may have starred both; their newer star stays.
            try db.execute("UPDATE OR IGNORE user_group_star SET group_id = ? WHERE group_id = ?", [new.rawValue, old.rawValue])
            try db.execute("DELETE FROM user_group_star WHERE group_id = ?", [old.rawValue])
            try db.execute("UPDATE OR IGNORE artist_picture SET album_artist_id = ? WHERE album_artist_id = ?", [new.rawValue, old.rawValue])
            try db.execute("UPDATE artist_picture SET artist_id = ? WHERE artist_id = ?", [new.rawValue, old.rawValue])
        }
        guard changed else { return }
        try db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('group_log_start', (SELECT coalesce(max(id), 0) FROM change_transaction))")
    }

    /// Every old group ID that no group has any more, with the new group holding most of its
    /// tracks (ties to the lower ID, so the answer does not depend on the read order); and
    /// whether any group's ID changed at all (a split keeps the old ID for one of its parts).
    static func moves(_ db: Connection, before: (GroupKey) -> GroupKey = \.beforeIdentity) throws -> (
        moves: [(old: GroupID, new: GroupID)], changed: Bool
    ) {
        var tracks: [GroupID: [GroupID: Int]] = [:]
        var current: Set<GroupID> = []
        let options = SortKeyOptions()
        try db.forEachRow(TrackRow.selectWithoutTexts) { row in
            let member = GroupMember(try TrackRow.decode(row), options: options)
            // Every album artist the album files under, so a star on a co-album-artist follows too.
            let owners = Set(member.albumOwners.map(\.key) + [member.albumOwner.key]).map { GroupKey(kind: .albumArtist, key: $0) }
            for key in member.groups + owners {
                let id = key.id
                current.insert(id)
                let old = before(key).id
                if old != id { tracks[old, default: [:]][id, default: 0] += 1 }
            }
        }
        let moves = tracks.compactMap { old, counts -> (old: GroupID, new: GroupID)? in
            guard !current.contains(old) else { return nil }
            let best = counts.min { a, b in a.value != b.value ? a.value > b.value : a.key.rawValue < b.key.rawValue }!
            return (old, best.key)
        }.sorted { $0.old.rawValue < $1.old.rawValue }
        return (moves, !tracks.isEmpty)
    }
}
