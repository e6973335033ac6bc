import CCrypto
import Foundation
import ShelfCore
import ShelfDatabase

/// A track before and after one write batch (nil: absent); `beforeKnown` is false when the
/// batch never read the track's full row.
struct TrackState {
    var before: Track?
    var beforeKnown: Bool
    var after: Track?
}

/// The changes of one `library.write { batch in … }` call: every method runs inside the same open
/// transaction, and the change-log rows describing them are written just before it commits.
///
/// Within a batch, changes to one object collapse into one log row (insert then update is an
/// insert; update then delete is a delete; insert then delete leaves nothing), so the log says
/// what each transaction did, not how.
@LibraryActor
public final class WriteBatch {
    let db: Connection
    /// The time stamped on rows this batch adds or modifies.
    public let now: Date
    private var pending: [ObjectKey: PendingChange] = [:]
    private var order: [ObjectKey] = []
    /// Net change in how many times each track appears in each playlist during this batch.
    private var membership: [PlaylistID: [TrackID: Int]] = [:]
    private var artworkToCollect: Set<ArtworkID> = []
    /// The albums and album artists whose tracks this batch added, changed or removed (`group_log`).
    private var touchedGroups: Set<LoggedGroup> = []
    /// Each track this batch touched, as it was before the batch and as it is now, so that the
    /// mirror can follow the batch without reading rows back.
    private(set) var trackStates: [TrackID: TrackState] = [:]

    /// Pictures this batch added, shown to artwork loaders until it ends.
    private(set) var registeredArtwork: [ArtworkID] = []
    private let pendingPictures: PendingArtwork?

    init(db: Connection, now: Date, pending: PendingArtwork? = nil) {
        self.db = db
        self.now = now
        self.pendingPictures = pending
    }

    // MARK: Tracks

    /// Inserts a track and returns its new ID (the `id` it carries is ignored: IDs are never reused).
    @discardableResult
    public func insert(_ track: Track) throws -> TrackID {
        try TrackRow.validate(track)
        let statement = try db.cachedStatement(TrackRow.insert)
        statement.reset()
        try statement.bindNull(at: 1)
        try TrackRow.bindFields(track, to: statement, from: 2)
        do {
            try statement.run()
        } catch let error as SQLiteError where error.code == .constraint {
            if try db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [track.path]) != nil {
                throw LibraryError.duplicatePath(track.path)
            }
            if let artwork = track.artworkID { throw LibraryError.artworkNotFound(artwork) }
            throw error
        }
        let id = TrackID(db.lastInsertRowID)
        record(.track(id), .insert)
        var stored = track
        stored.id = id
        touchedGroups.formUnion(LoggedGroup.groups(of: stored))
        trackStates[id] = TrackState(before: nil, beforeKnown: true, after: stored)
        return id
    }

    /// The stored track with this ID, as this transaction sees it.
    public func track(_ id: TrackID) throws -> Track? {
        try db.queryOne(TrackRow.select + " WHERE id = ?", [id.rawValue], TrackRow.decode)
    }

    /// Replaces the stored values of `track.id` and returns the property groups that changed (empty
    /// when nothing did, in which case nothing is written or logged). `dateModified` is set by the
    /// store when anything but play statistics changed.
    @discardableResult
    public func update(_ track: Track) throws -> PropertyGroups {
        guard let old = try self.track(track.id) else { throw LibraryError.trackNotFound(track.id) }
        try TrackRow.validate(track)
        var new = track
        new.dateModified = old.dateModified
        let groups = new.changedGroups(from: old)
        if groups.isEmpty { return groups }
        if !groups.subtracting(.playStats).isEmpty { new.dateModified = now }
        let statement = try db.cachedStatement(TrackRow.update)
        statement.reset()
        let next = try TrackRow.bindFields(new, to: statement, from: 1)
        try statement.bind(new.id.rawValue, at: next)
        do {
            try statement.run()
        } catch let error as SQLiteError where error.code == .constraint {
            if new.path != old.path, try db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [new.path]) != nil {
                throw LibraryError.duplicatePath(new.path)
            }
            if let artwork = new.artworkID, artwork != old.artworkID { throw LibraryError.artworkNotFound(artwork) }
            throw error
        }
        if groups.contains(.artwork), let released = old.artworkID { artworkToCollect.insert(released) }
        // What albums and artists show: names, pictures, durations, play counts.
        if !groups.isDisjoint(with: [.metadata, .artwork, .file, .playStats]) {
            touchedGroups.formUnion(LoggedGroup.groups(of: old))
            touchedGroups.formUnion(LoggedGroup.groups(of: new))
        }
        record(.track(new.id), .update, groups)
        trackStates[new.id, default: TrackState(before: old, beforeKnown: true, after: nil)].after = new
        return groups
    }

    /// Reads a track, lets `change` modify it, and stores the result; returns the groups changed.
    @discardableResult
    public func updateTrack(_ id: TrackID, _ change: (inout Track) throws -> Void) throws -> PropertyGroups {
        guard var track = try self.track(id) else { throw LibraryError.trackNotFound(id) }
        try change(&track)
        track.id = id
        return try update(track)
    }

    /// Deletes a track; the playlists that held it are logged as updated (their items changed) and
    /// its artwork is collected when no other track shows it.
    public func deleteTrack(_ id: TrackID) throws {
        guard
            let artwork = try db.queryOne(
                "SELECT artwork_id FROM track WHERE id = ?", [id.rawValue],
                {
                    try $0.get(0, as: UUID?.self)
                })
        else { throw LibraryError.trackNotFound(id) }
        let appearances = try db.query(
            "SELECT playlist_id, count(*) FROM playlist_item WHERE track_id = ? GROUP BY playlist_id", [id.rawValue]
        ) { (PlaylistID(try $0.int64(0)), Int(try $0.int64(1))) }
        if let old = try track(id) { touchedGroups.formUnion(LoggedGroup.groups(of: old)) }
        try db.execute("DELETE FROM track WHERE id = ?", [id.rawValue])
        for (playlist, count) in appearances {
            record(.playlist(playlist), .update, .items)
            membership[playlist, default: [:]][id, default: 0] -= count
        }
        if let artwork { artworkToCollect.insert(ArtworkID(artwork)) }
        record(.track(id), .delete)
        // The full row was not read: the mirror reads what it had for a track deleted outright.
        trackStates[id, default: TrackState(before: nil, beforeKnown: false, after: nil)].after = nil
    }

    // MARK: Artwork

    /// The bytes of a picture this batch added, before it commits (nil for any other ID).
    public func pendingArtworkData(_ id: ArtworkID) -> Data? {
        registeredArtwork.contains(id) ? pendingPictures?.data(id) : nil
    }

    /// Stores a picture and returns its ID. Pictures are content-addressed: the same bytes give the
    /// same ID, and no second copy is stored. A picture no track uses by the end of the batch is
    /// collected.
    @discardableResult
    public func addArtwork(_ data: Data) throws -> ArtworkID {
        guard !data.isEmpty else { throw LibraryError.invalidValue(field: "artwork", value: "0 bytes", reason: "empty picture") }
        let digest = Self.sha256(data)
        if let existing = try db.scalar(UUID.self, "SELECT id FROM artwork WHERE sha256 = ?", [digest]) {
            return ArtworkID(existing)
        }
        let id = ArtworkID()
        try db.execute(
            "INSERT INTO artwork (id, sha256, byte_count, created, data) VALUES (?, ?, ?, ?, ?)",
            [id.rawValue, digest, data.count, now, data])
        record(.artwork(id), .insert)
        pendingPictures?.register(id, data)
        registeredArtwork.append(id)
        artworkToCollect.insert(id)
        return id
    }

    /// Makes `picture` (from the `artist.*` file at `path`, `stamp` telling when it changes) the
    /// picture of an album artist; the picture it replaces is collected if nothing else uses it.
    public func setArtistPicture(albumArtist: GroupID, artist: GroupID, name: String, picture: Data, path: String, stamp: String) throws {
        let old = try db.scalar(UUID.self, "SELECT artwork_id FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue])
        let id = try addArtwork(picture)
        try db.execute(
            "INSERT OR REPLACE INTO artist_picture (album_artist_id, artist_id, name, artwork_id, path, stamp) VALUES (?, ?, ?, ?, ?, ?)",
            [albumArtist.rawValue, artist.rawValue, name, id.rawValue, path, stamp])
        if let old { artworkToCollect.insert(ArtworkID(old)) }
        touchedGroups.insert(LoggedGroup(kind: GroupKind.albumArtist.code, id: albumArtist.rawValue))
    }

    /// Forgets an album artist's `artist.*` picture (its file is gone).
    public func removeArtistPicture(albumArtist: GroupID) throws {
        if let old = try db.scalar(UUID.self, "SELECT artwork_id FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue]) {
            try db.execute("DELETE FROM artist_picture WHERE album_artist_id = ?", [albumArtist.rawValue])
            artworkToCollect.insert(ArtworkID(old))
            touchedGroups.insert(LoggedGroup(kind: GroupKind.albumArtist.code, id: albumArtist.rawValue))
        }
    }

    /// Deletes a picture that no track uses.
    public func deleteArtwork(_ id: ArtworkID) throws {
        guard try db.scalar(Int.self, "SELECT 1 FROM artwork WHERE id = ?", [id.rawValue]) != nil else {
            throw LibraryError.artworkNotFound(id)
        }
        if try db.scalar(
            Int.self, "SELECT 1 FROM track WHERE artwork_id = ?1 UNION ALL SELECT 1 FROM artist_picture WHERE artwork_id = ?1 LIMIT 1", [id.rawValue]) != nil
        {
            throw LibraryError.artworkInUse(id)
        }
        try db.execute("DELETE FROM artwork WHERE id = ?", [id.rawValue])
        record(.artwork(id), .delete)
    }

    /// The SHA-256 digest that addresses a picture.
    nonisolated static func sha256(_ data: Data) -> Data {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { buffer in
            _ = SHA256(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &digest)
        }
        return Data(digest)
    }

    // MARK: Playlists

    /// Creates a playlist, folder or smart playlist and returns its ID.
    @discardableResult
    public func createPlaylist(_ playlist: Playlist) throws -> PlaylistID {
        try checkPlaylistName(playlist.name)
        if let parent = playlist.parentID { try checkFolder(parent) }
        try db.execute(
            "INSERT INTO playlist (name, parent_id, kind, rules, date_added, date_modified) VALUES (?, ?, ?, ?, ?, ?)",
            [playlist.name, playlist.parentID?.rawValue, playlist.kind.rawValue, playlist.rules, now, now])
        let id = PlaylistID(db.lastInsertRowID)
        if playlist.kind == .smart { try checkSmartRules(playlist.rules, id: id) }
        record(.playlist(id), .insert)
        return id
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
        guard old.name != playlist.name || old.parentID != playlist.parentID || old.rules != playlist.rules else { return }
        if old.kind == .smart, old.rules != playlist.rules { try checkSmartRules(playlist.rules, id: playlist.id) }
        try db.execute(
            "UPDATE playlist SET name = ?, parent_id = ?, rules = ?, date_modified = ? WHERE id = ?",
            [playlist.name, playlist.parentID?.rawValue, playlist.rules, now, playlist.id.rawValue])
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

    // MARK: The change log

    private func record(_ key: ObjectKey, _ operation: ChangeOperation, _ groups: PropertyGroups = []) {
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
    static let select = "SELECT id, name, parent_id, kind, rules, date_added, date_modified FROM playlist"

    static func decode(_ row: Row) throws -> Playlist {
        Playlist(
            id: PlaylistID(try row.int64(0)), name: try row.string(1),
            parentID: row.optionalInt64(2).map { PlaylistID($0) }, kind: Playlist.Kind(rawValue: Int(try row.int64(3))) ?? .regular,
            rules: row.optionalString(4), dateAdded: try row.get(5), dateModified: try row.get(6))
    }
}
