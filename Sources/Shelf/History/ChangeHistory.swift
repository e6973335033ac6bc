import Foundation
import ShelfCore
import ShelfDatabase

/// Reads the persistent change history from one read-only snapshot: a reader never sees a
/// transaction half applied, never skips one and never sees one twice, because every query of a
/// call runs in one read transaction bounded above by the last transaction committed at its start.
struct ChangeHistory {
    let db: Connection
    let storeID: UUID

    /// Checks a token against the store and the retained history; returns the snapshot's bounds.
    func check(_ token: ChangeToken, bounds: HistoryBounds) throws {
        let text = token.description
        if token.storeID != storeID {
            guard let restoredAt = bounds.restoredStores[token.storeID] else {
                throw LibraryError.tokenExpired(token: text, reason: "it belongs to another store (\(token.storeID.uuidString.lowercased()))")
            }
            // The library was restored from a backup of that store: its history is ours up to the
            // backup's position, and what came after it was undone by the restore.
            if token.transaction > restoredAt {
                throw LibraryError.tokenExpired(
                    token: text, reason: "the library was restored from a backup taken at position \(restoredAt), so the changes after it are gone")
            }
        }
        if token.transaction > bounds.current {
            throw LibraryError.tokenExpired(token: text, reason: "it lies beyond the current position \(bounds.current)")
        }
        if token.transaction < bounds.start {
            throw LibraryError.tokenExpired(token: text, reason: "it is older than the retained history, which starts at \(bounds.start)")
        }
    }

    func token(_ transaction: Int64) -> ChangeToken { ChangeToken(storeID: storeID, transaction: transaction) }

    /// One `PersistentChange` per transaction after `since`, oldest first, at most `limit` of them.
    func changes(since: ChangeToken, limit: Int?) throws -> ChangeFeed {
        try db.transaction(.deferred) {
            let bounds = try HistoryBounds.read(db)
            try check(since, bounds: bounds)
            if since.transaction < bounds.compacted { throw LibraryError.detailsUnavailable(token: since.description) }
            let upper = try upperBound(after: since.transaction, bounds: bounds, limit: limit)
            var changes: [PersistentChange] = []
            var current: (change: PersistentChange, net: NetChanges)?
            try LogEntry.forEach(db, after: since.transaction, through: upper) { entry in
                if current?.change.token.transaction != entry.transaction {
                    if let done = current { changes.append(finished(done)) }
                    current = (PersistentChange(token: token(entry.transaction), date: entry.date), NetChanges())
                }
                current?.net.add(entry.key, entry.operation, entry.groups)
            }
            if let done = current { changes.append(finished(done)) }
            return ChangeFeed(changes: changes, token: token(upper), hasMore: upper < bounds.current)
        }
    }

    private func finished(_ pair: (change: PersistentChange, net: NetChanges)) -> PersistentChange {
        var change = pair.change
        pair.net.apply(to: &change)
        return change
    }

    /// The last transaction a page of at most `limit` transactions after `after` reaches.
    private func upperBound(after: Int64, bounds: HistoryBounds, limit: Int?) throws -> Int64 {
        guard let limit else { return bounds.current }
        // Transaction IDs can have gaps (rolled-back batches never commit one), so count real rows.
        let last = try db.scalar(
            Int64.self, "SELECT id FROM change_transaction WHERE id > ? AND id <= ? ORDER BY id LIMIT 1 OFFSET ?",
            [after, bounds.current, max(limit, 1) - 1])
        return last ?? bounds.current
    }

    /// Everything since `since` collapsed into one net difference per object, as a single change
    /// whose token is the current position. Works across compacted history.
    func summary(since: ChangeToken) throws -> PersistentChange {
        try db.transaction(.deferred) {
            let bounds = try HistoryBounds.read(db)
            try check(since, bounds: bounds)
            var net = NetChanges()
            var from = since.transaction
            if since.transaction < bounds.compacted {
                // Inside the compacted range only the net effect from its start is known. It is exact
                // for a token at the start; for a later token it may repeat what the client already
                // has, which applying again leaves unchanged, and it reports objects created and
                // removed within the range as deleted, since the client may have seen them.
                let insideRange = since.transaction > bounds.start
                try db.forEachRow("SELECT object_type, object_id, existed_before, exists_after, groups FROM change_summary") { row in
                    net.addSummary(
                        try LogEntry.key(row, typeColumn: 0),
                        NetChanges.State(
                            existedBefore: try row.int64(2) != 0, existsAfter: try row.int64(3) != 0,
                            groups: PropertyGroups(rawValue: Int(try row.int64(4))), reportTransientAsDeleted: insideRange))
                }
                from = bounds.compacted
            }
            let date = try db.scalar(Date.self, "SELECT committed_at FROM change_transaction WHERE id = ?", [bounds.current])
            try LogEntry.forEach(db, after: from, through: bounds.current) { net.add($0.key, $0.operation, $0.groups) }
            var change = PersistentChange(token: token(bounds.current), date: date ?? Date())
            net.apply(to: &change)
            return change
        }
    }

    /// Changes seen through a set of playlists: the playlists themselves, and the tracks in them. A
    /// track that enters the scope (added to a scoped playlist) is inserted, one that leaves it is
    /// deleted, and updates count only while the track is in scope. Needs per-transaction details.
    func scopedChanges(since: ChangeToken, playlists: Set<PlaylistID>, limit: Int?) throws -> ChangeFeed {
        try db.transaction(.deferred) {
            let bounds = try HistoryBounds.read(db)
            try check(since, bounds: bounds)
            if since.transaction < bounds.compacted { throw LibraryError.detailsUnavailable(token: since.description) }
            let upper = try upperBound(after: since.transaction, bounds: bounds, limit: limit)
            let ids = playlists.map(\.rawValue).sorted()
            let list = ids.map(String.init).joined(separator: ",")  // integers only: safe to inline

            // Membership at the snapshot, then rolled back to the token through the logged deltas.
            var count: [TrackID: Int] = [:]
            try db.forEachRow("SELECT track_id, count(*) FROM playlist_item WHERE playlist_id IN (\(list)) GROUP BY track_id") {
                count[TrackID(try $0.int64(0))] = Int(try $0.int64(1))
            }
            var deltas: [Int64: [TrackID: Int]] = [:]
            try db.forEachRow(
                "SELECT tx, track_id, delta FROM playlist_item_log WHERE playlist_id IN (\(list)) AND tx > ? ORDER BY tx",
                [since.transaction]
            ) { row in
                let tx = try row.int64(0)
                let track = TrackID(try row.int64(1))
                let delta = Int(try row.int64(2))
                count[track, default: 0] -= delta
                if tx <= upper { deltas[tx, default: [:]][track, default: 0] += delta }
            }

            var changes: [PersistentChange] = []
            var entries: [LogEntry] = []
            try LogEntry.forEach(db, after: since.transaction, through: upper) { entries.append($0) }
            var index = 0
            while index < entries.count {
                let tx = entries[index].transaction
                var change = PersistentChange(token: token(tx), date: entries[index].date)
                var before: [TrackID: Bool] = [:]
                for (track, delta) in deltas[tx] ?? [:] {
                    before[track] = count[track, default: 0] > 0
                    count[track, default: 0] += delta
                }
                var reported = Set<TrackID>()
                while index < entries.count, entries[index].transaction == tx {
                    let (key, operation, groups) = (entries[index].key, entries[index].operation, entries[index].groups)
                    index += 1
                    switch key {
                    case .playlist(let id) where playlists.contains(id):
                        switch operation {
                        case .insert: change.playlists.inserted.append(key)
                        case .update: change.playlists.updated.append(UpdatedObject(id: key, groups: groups))
                        case .delete: change.playlists.deleted.append(key)
                        }
                    case .track(let id):
                        let wasIn = before[id] ?? (count[id, default: 0] > 0)
                        let isIn = count[id, default: 0] > 0
                        if operation == .delete, wasIn {
                            change.tracks.deleted.append(key)
                            reported.insert(id)
                        } else if operation == .update, wasIn, isIn {
                            change.tracks.updated.append(UpdatedObject(id: key, groups: groups))
                        }
                    default: break
                    }
                }
                for (track, wasIn) in before.sorted(by: { $0.key < $1.key }) where !reported.contains(track) {
                    let isIn = count[track, default: 0] > 0
                    if !wasIn && isIn { change.tracks.inserted.append(.track(track)) }
                    if wasIn && !isIn { change.tracks.deleted.append(.track(track)) }
                }
                if !change.isEmpty { changes.append(change) }
            }
            return ChangeFeed(changes: changes, token: token(upper), hasMore: upper < bounds.current)
        }
    }
}
