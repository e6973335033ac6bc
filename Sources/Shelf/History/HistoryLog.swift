import Foundation
import ShelfCore
import ShelfDatabase

/// The limits of the retained history, read inside one snapshot.
struct HistoryBounds {
    /// The last committed transaction: the position of `currentToken()`.
    var current: Int64
    /// Tokens before this transaction have expired (nothing is kept about them).
    var start: Int64
    /// Transactions up to this one are known only through the compacted summary.
    var compacted: Int64
    /// Stores this one was restored from, with the position each backup held: their tokens up
    /// to that position still work here.
    var restoredStores: [UUID: Int64] = [:]

    static func read(_ db: Connection) throws -> HistoryBounds {
        let current = try db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_transaction'") ?? 0
        func meta(_ key: String) throws -> Int64 {
            try db.scalar(String.self, "SELECT value FROM meta WHERE key = ?", [key]).flatMap { Int64($0) } ?? 0
        }
        var restored: [UUID: Int64] = [:]
        for entry in (try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'restored_stores'") ?? "").split(separator: ",") {
            let parts = entry.split(separator: ":")
            if parts.count == 2, let id = UUID(uuidString: String(parts[0])), let position = Int64(parts[1]) { restored[id] = position }
        }
        return HistoryBounds(
            current: current, start: try meta("history_start_tx"), compacted: try meta("history_compacted_tx"), restoredStores: restored)
    }
}

/// One `change_log` row, decoded, with its transaction's commit date.
struct LogEntry {
    var transaction: Int64
    var date: Date
    var key: ObjectKey
    var operation: ChangeOperation
    var groups: PropertyGroups

    /// Calls `body` with every change-log row of the transactions `(after, through]`, in commit
    /// order: the one query the feed, the summary and the compactor all read the log with.
    static func forEach(_ db: Connection, after: Int64, through: Int64, _ body: (LogEntry) throws -> Void) throws {
        try db.forEachRow(
            """
            SELECT l.tx, t.committed_at, l.object_type, l.object_id, l.op, l.groups
            FROM change_log AS l JOIN change_transaction AS t ON t.id = l.tx
            WHERE l.tx > ? AND l.tx <= ?
            ORDER BY l.tx, l.seq
            """, [after, through]
        ) { row in
            try body(
                LogEntry(
                    transaction: try row.int64(0), date: try row.get(1), key: try key(row, typeColumn: 2),
                    operation: ChangeOperation(rawValue: Int(try row.int64(4))) ?? .update,
                    groups: PropertyGroups(rawValue: Int(try row.int64(5)))))
        }
    }

    /// Decodes `object_type, object_id` at columns `typeColumn` and `typeColumn + 1`.
    static func key(_ row: Row, typeColumn: Int32) throws -> ObjectKey {
        let rawType = Int(try row.int64(typeColumn))
        switch ObjectType(rawValue: rawType) {
        case .track: return .track(TrackID(try row.int64(typeColumn + 1)))
        case .playlist: return .playlist(PlaylistID(try row.int64(typeColumn + 1)))
        case .artwork: return .artwork(ArtworkID(try row.get(typeColumn + 1, as: UUID.self)))
        case .playQueue: return .playQueue(UserID(try row.int64(typeColumn + 1)))
        case nil: throw SQLiteError(extendedCode: 11, message: "unknown object type \(rawType) in the change log")
        }
    }

    /// An object key as the `object_type, object_id` argument pair.
    static func arguments(_ key: ObjectKey) -> [(any SQLiteBindable)?] {
        switch key {
        case .track(let id): [Int64(ObjectType.track.rawValue), id.rawValue]
        case .playlist(let id): [Int64(ObjectType.playlist.rawValue), id.rawValue]
        case .artwork(let id): [Int64(ObjectType.artwork.rawValue), id.rawValue.rawBytes]
        case .playQueue(let id): [Int64(ObjectType.playQueue.rawValue), id.rawValue]
        }
    }

    /// Binds an object key as `object_type, object_id` at `index` and `index + 1`.
    static func bind(_ key: ObjectKey, to statement: Statement, at index: Int32) throws {
        try statement.bind(Int64(key.type.rawValue), at: index)
        switch key {
        case .track(let id): try statement.bind(id.rawValue, at: index + 1)
        case .playlist(let id): try statement.bind(id.rawValue, at: index + 1)
        case .artwork(let id): try statement.bind(id.rawValue.rawBytes, at: index + 1)
        case .playQueue(let id): try statement.bind(id.rawValue, at: index + 1)
        }
    }
}

/// Folds a sequence of changes into one net difference per object: inserted then deleted is
/// nothing, inserted then updated is inserted, updated several times is updated once with the
/// union of groups. Objects keep the order in which they were first touched.
struct NetChanges {
    struct State {
        /// Whether the object existed before the first folded change.
        var existedBefore: Bool
        /// Whether it exists after the last one.
        var existsAfter: Bool
        var groups: PropertyGroups
        /// For compacted summaries seen from a token inside their range: report an object that was
        /// created and removed within the range as deleted, since the client may have seen it.
        var reportTransientAsDeleted = false
    }

    private(set) var states: [ObjectKey: State] = [:]
    private var order: [ObjectKey] = []

    /// Folds one logged change.
    mutating func add(_ key: ObjectKey, _ operation: ChangeOperation, _ groups: PropertyGroups) {
        if var state = states[key] {
            switch operation {
            case .insert: state.existsAfter = true
            case .update: state.groups.formUnion(groups)
            case .delete: state.existsAfter = false
            }
            states[key] = state
        } else {
            order.append(key)
            states[key] = State(
                existedBefore: operation != .insert, existsAfter: operation != .delete,
                groups: operation == .update ? groups : [])
        }
    }

    /// Folds a compacted summary row as the object's first change.
    mutating func addSummary(_ key: ObjectKey, _ state: State) {
        precondition(states[key] == nil, "a summary row must come before the detailed changes")
        order.append(key)
        states[key] = state
    }

    /// The net difference, per object type, in first-touched order.
    func apply(to change: inout PersistentChange) {
        for key in order {
            guard let state = states[key] else { continue }
            var details = change[key.type]
            switch (state.existedBefore, state.existsAfter) {
            case (false, true): details.inserted.append(key)
            case (true, true): details.updated.append(UpdatedObject(id: key, groups: state.groups))
            case (true, false): details.deleted.append(key)
            case (false, false): if state.reportTransientAsDeleted { details.deleted.append(key) }
            }
            change[key.type] = details
        }
    }
}
