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
    var pending: [ObjectKey: PendingChange] = [:]
    var order: [ObjectKey] = []
    /// Net change in how many times each track appears in each playlist during this batch.
    var membership: [PlaylistID: [TrackID: Int]] = [:]
    var artworkToCollect: Set<ArtworkID> = []
    /// The albums and album artists whose tracks this batch added, changed or removed (`group_log`).
    var touchedGroups: Set<LoggedGroup> = []
    /// Each track this batch touched, as it was before the batch and as it is now, so that the
    /// mirror can follow the batch without reading rows back.
    var trackStates: [TrackID: TrackState] = [:]

    /// Pictures this batch added, shown to artwork loaders until it ends.
    var registeredArtwork: [ArtworkID] = []
    let pendingPictures: PendingArtwork?

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
}
