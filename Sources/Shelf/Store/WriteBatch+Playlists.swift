import CCrypto
import Foundation
import ShelfCore
import ShelfDatabase

/// A batch's playlists, folders and smart playlists, and their items.
extension WriteBatch {
    /// Creates a playlist, folder or smart playlist and returns its ID.
    @discardableResult
    public func createPlaylist(_ playlist: Playlist) throws -> PlaylistID {
        try checkPlaylistName(playlist.name)
        if let parent = playlist.parentID { try checkFolder(parent) }
        try db.execute(
            "INSERT INTO playlist (name, parent_id, kind, rules, comment, date_added, date_modified) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [playlist.name, playlist.parentID?.rawValue, playlist.kind.rawValue, playlist.rules, try Self.comment(playlist.comment), now, now])
        let id = PlaylistID(db.lastInsertRowID)
        if playlist.kind == .smart { try checkSmartRules(playlist.rules, id: id) }
        record(.playlist(id), .insert)
        return id
    }

    /// A comment as stored: nil for none or a blank one; over 4,000 characters is refused.
    static func comment(_ text: String?) throws -> String? {
        guard let text, !SortKey.isBlank(text) else { return nil }
        guard text.count <= 4_000 else {
            throw LibraryError.invalidValue(field: "playlist comment", value: "\(text.prefix(40))…", reason: "must be at most 4,000 characters")
        }
        return text
    }

    /// Rejects smart rules that cannot be evaluated (see `SmartContext.problem`), naming why.
    private func checkSmartRules(_ json: String?, id: PlaylistID) throws {
        guard let json else { throw LibraryError.invalidValue(field: "rules", value: "", reason: "a smart playlist needs rules") }
        let rules: SmartRules
        do { rules = try SmartRules(json: json) } catch {
            throw LibraryError.invalidValue(field: "rules", value: json, reason: "not a smart playlist definition: \(error)")
        }
        var kinds: [PlaylistID: Playlist.Kind] = [:]
        var stored: [PlaylistID: SmartRules] = [:]
        try db.forEachRow("SELECT id, kind, rules FROM playlist") { row in
            let playlist = PlaylistID(try row.int64(0))
            kinds[playlist] = Playlist.Kind(rawValue: Int(try row.int64(1))) ?? .regular
            if playlist != id, let text = row.optionalString(2) { stored[playlist] = try? SmartRules(json: text) }
        }
        if let problem = SmartContext.problem(with: rules, id: id, kinds: kinds, stored: stored) {
            throw LibraryError.invalidValue(field: "rules", value: json, reason: problem)
        }
    }

    /// The stored playlist with this ID, as this transaction sees it.
    public func playlist(_ id: PlaylistID) throws -> Playlist? {
        try db.queryOne(PlaylistRow.select + " WHERE id = ?", [id.rawValue], PlaylistRow.decode)
    }

    /// Renames, moves or re-rules a playlist (its kind is fixed at creation).
    public func updatePlaylist(_ playlist: Playlist) throws {
        guard let old = try self.playlist(playlist.id) else { throw LibraryError.playlistNotFound(playlist.id) }
        try checkPlaylistName(playlist.name)
        if let parent = playlist.parentID {
            try checkFolder(parent)
            if try isDescendant(parent, of: playlist.id) {
                throw LibraryError.invalidValue(
                    field: "parentID", value: String(parent.rawValue), reason: "a folder cannot be moved into itself")
            }
        }
        let comment = try Self.comment(playlist.comment)
        guard old.name != playlist.name || old.parentID != playlist.parentID || old.rules != playlist.rules || old.comment != comment else { return }
        if old.kind == .smart, old.rules != playlist.rules { try checkSmartRules(playlist.rules, id: playlist.id) }
        try db.execute(
            "UPDATE playlist SET name = ?, parent_id = ?, rules = ?, comment = ?, date_modified = ? WHERE id = ?",
            [playlist.name, playlist.parentID?.rawValue, playlist.rules, comment, now, playlist.id.rawValue])
        record(.playlist(playlist.id), .update, .metadata)
    }

    /// Deletes a playlist; a folder takes everything inside it along.
    public func deletePlaylist(_ id: PlaylistID) throws {
        let doomed = try db.query(
            """
            WITH RECURSIVE tree(id) AS (
              SELECT id FROM playlist WHERE id = ?
              UNION ALL SELECT playlist.id FROM playlist JOIN tree ON playlist.parent_id = tree.id
            )
            SELECT id FROM tree
            """, [id.rawValue]
        ) { PlaylistID(try $0.int64(0)) }
        guard !doomed.isEmpty else { throw LibraryError.playlistNotFound(id) }
        for playlist in doomed {
            for (track, count) in try itemCounts(playlist) { membership[playlist, default: [:]][track, default: 0] -= count }
        }
        try db.execute("DELETE FROM playlist WHERE id = ?", [id.rawValue])
        for playlist in doomed { record(.playlist(playlist), .delete) }
    }

    /// Replaces a playlist's items with `tracks`, in order (duplicates allowed).
    public func setPlaylistItems(_ id: PlaylistID, _ tracks: [TrackID]) throws {
        try checkItemsPlaylist(id)
        for (track, count) in try itemCounts(id) { membership[id, default: [:]][track, default: 0] -= count }
        try db.execute("DELETE FROM playlist_item WHERE playlist_id = ?", [id.rawValue])
        try insertItems(id, tracks, from: 0)
        try touchItems(id)
    }

    /// Appends `tracks` to the end of a playlist.
    public func appendToPlaylist(_ id: PlaylistID, _ tracks: [TrackID]) throws {
        try checkItemsPlaylist(id)
        let next = try db.scalar(Int64.self, "SELECT coalesce(max(position) + 1, 0) FROM playlist_item WHERE playlist_id = ?", [id.rawValue]) ?? 0
        try insertItems(id, tracks, from: next)
        try touchItems(id)
    }

    /// The items of a playlist, in order, as this transaction sees them.
    public func playlistItems(_ id: PlaylistID) throws -> [TrackID] {
        try db.query("SELECT track_id FROM playlist_item WHERE playlist_id = ? ORDER BY position", [id.rawValue]) {
            TrackID(try $0.int64(0))
        }
    }

    /// Inserts `tracks` before the item at `index` (0-based; the count appends).
    public func insertIntoPlaylist(_ id: PlaylistID, _ tracks: [TrackID], at index: Int) throws {
        try requireVisible(tracks)
        try editItems(id) { items in
            guard (0...items.count).contains(index) else { throw Self.badIndex(index, count: items.count) }
            items.insert(contentsOf: tracks, at: index)
        }
    }

    /// Moves the items at `indexes` (0-based, any order) so that they sit, in their old order,
    /// before the item that was at `destination` (the count moves them to the end).
    public func movePlaylistItems(_ id: PlaylistID, from indexes: [Int], to destination: Int) throws {
        try editItems(id) { items in
            for index in indexes where !items.indices.contains(index) { throw Self.badIndex(index, count: items.count) }
            guard (0...items.count).contains(destination) else { throw Self.badIndex(destination, count: items.count) }
            let chosen = Set(indexes)
            let moving = items.indices.filter { chosen.contains($0) }.map { items[$0] }
            let before = (0..<destination).filter { !chosen.contains($0) }.count
            var rest = items.indices.filter { !chosen.contains($0) }.map { items[$0] }
            rest.insert(contentsOf: moving, at: before)
            items = rest
        }
    }

    /// Removes the items at `indexes` (0-based); other copies of the same tracks stay.
    public func removeFromPlaylist(_ id: PlaylistID, at indexes: [Int]) throws {
        try editItems(id) { items in
            for index in indexes where !items.indices.contains(index) { throw Self.badIndex(index, count: items.count) }
            let chosen = Set(indexes)
            items = items.indices.filter { !chosen.contains($0) }.map { items[$0] }
        }
    }

    /// Reads a playlist's items, lets `change` edit them, and stores the result when it differs
    /// (positions stay dense: 0, 1, 2…).
    private func editItems(_ id: PlaylistID, _ change: (inout [TrackID]) throws -> Void) throws {
        try checkItemsPlaylist(id)
        var items = try playlistItems(id)
        let before = items
        try change(&items)
        guard items != before else { return }
        for (track, count) in try itemCounts(id) { membership[id, default: [:]][track, default: 0] -= count }
        try db.execute("DELETE FROM playlist_item WHERE playlist_id = ?", [id.rawValue])
        try insertItems(id, items, from: 0)
        try touchItems(id)
    }

    private static func badIndex(_ index: Int, count: Int) -> LibraryError {
        LibraryError.invalidValue(field: "position", value: String(index), reason: "the playlist has \(count) item\(count == 1 ? "" : "s")")
    }

    private func insertItems(_ id: PlaylistID, _ tracks: [TrackID], from first: Int64) throws {
        try requireVisible(tracks)
        for (offset, track) in tracks.enumerated() {
            do {
                try db.execute(
                    "INSERT INTO playlist_item (playlist_id, position, track_id) VALUES (?, ?, ?)",
                    [id.rawValue, first + Int64(offset), track.rawValue])
            } catch let error as SQLiteError where error.code == .constraint {
                throw LibraryError.trackNotFound(track)
            }
            membership[id, default: [:]][track, default: 0] += 1
        }
    }

    /// How many times each track appears in a playlist now.
    private func itemCounts(_ id: PlaylistID) throws -> [(TrackID, Int)] {
        try db.query("SELECT track_id, count(*) FROM playlist_item WHERE playlist_id = ? GROUP BY track_id", [id.rawValue]) {
            (TrackID(try $0.int64(0)), Int(try $0.int64(1)))
        }
    }

    private func touchItems(_ id: PlaylistID) throws {
        try db.execute("UPDATE playlist SET date_modified = ? WHERE id = ?", [now, id.rawValue])
        record(.playlist(id), .update, .items)
    }

    private func checkPlaylistName(_ name: String) throws {
        if SortKey.isBlank(name) {
            throw LibraryError.invalidValue(field: "playlist name", value: "\"\(name)\"", reason: "must not be blank")
        }
    }

    private func checkFolder(_ id: PlaylistID) throws {
        guard let parent = try playlist(id) else { throw LibraryError.playlistNotFound(id) }
        guard parent.kind == .folder else {
            throw LibraryError.invalidValue(field: "parentID", value: String(id.rawValue), reason: "is not a folder")
        }
    }

    private func checkItemsPlaylist(_ id: PlaylistID) throws {
        guard let playlist = try playlist(id) else { throw LibraryError.playlistNotFound(id) }
        guard playlist.kind == .regular else {
            throw LibraryError.invalidValue(
                field: "playlist", value: String(id.rawValue), reason: "only regular playlists hold items directly")
        }
    }

    private func isDescendant(_ candidate: PlaylistID, of ancestor: PlaylistID) throws -> Bool {
        var current: PlaylistID? = candidate
        var seen = Set<PlaylistID>()
        while let id = current, seen.insert(id).inserted {
            if id == ancestor { return true }
            current = try playlist(id)?.parentID
        }
        return false
    }
}
