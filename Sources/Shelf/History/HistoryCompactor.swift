import Foundation
import ShelfCore
import ShelfDatabase

/// How much per-transaction history a library keeps before `compactHistory()` folds it into the
/// net summary.
public struct HistoryRetention: Sendable, Equatable {
    /// Keep every transaction newer than this many days (nil: no age rule).
    public var keepDays: Int?
    /// Keep at least this many of the newest change-log entries (nil: no count rule).
    public var keepEntries: Int?
    /// When the compacted summary holds more objects than this, it is dropped too and tokens from
    /// before the compacted range expire (nil: keep the summary whatever its size).
    public var maxSummaryObjects: Int?

    /// The default keeps the last 90 days or the last 1,000,000 entries, whichever keeps more.
    public init(keepDays: Int? = 90, keepEntries: Int? = 1_000_000, maxSummaryObjects: Int? = nil) {
        self.keepDays = keepDays
        self.keepEntries = keepEntries
        self.maxSummaryObjects = maxSummaryObjects
    }

    /// Compact everything: only the summary remains (tests and `shelf history compact --all`).
    public static let none = HistoryRetention(keepDays: nil, keepEntries: nil)
}

/// What a compaction did.
public struct CompactionReport: Sendable, Codable, Equatable {
    /// Transactions folded into the summary.
    public var transactions: Int
    /// Change-log entries removed.
    public var entries: Int
    /// Objects in the summary afterwards.
    public var summaryObjects: Int
    /// Details are kept from this token on; `changes(since:)` from earlier answers `.detailsUnavailable`.
    public var detailsFrom: ChangeToken
    /// Tokens before this one have expired.
    public var historyStart: ChangeToken
}

/// Folds old per-transaction history into the net summary, a chunk at a time.
@LibraryActor
struct HistoryCompactor {
    let store: Store
    /// Change-log entries folded per write transaction: small enough that other writes interleave.
    var chunkEntries = 20_000

    func compact(retention: HistoryRetention, now: Date) async throws -> CompactionReport {
        let db = store.writer
        var folded = (transactions: 0, entries: 0)
        let target = try boundary(retention: retention, now: now)
        while true {
            try Task.checkCancellation()
            let bounds = try HistoryBounds.read(db)
            guard bounds.compacted < target else { break }
            // The chunk ends before the transaction holding the (chunkEntries+1)-th entry, but always
            // takes at least one transaction so that a huge one cannot stall the loop.
            let next = try db.scalar(
                Int64.self, "SELECT tx FROM change_log WHERE tx > ? ORDER BY tx, seq LIMIT 1 OFFSET ?",
                [bounds.compacted, chunkEntries])
            let end = min(target, max(bounds.compacted + 1, (next ?? target + 1) - 1))
            let done = try store.write { _ in try fold(from: bounds.compacted, through: end) }
            folded.transactions += done.transactions
            folded.entries += done.entries
            await Task.yield()  // let waiting writes run between chunks
        }
        if let limit = retention.maxSummaryObjects,
            try (db.scalar(Int.self, "SELECT count(*) FROM change_summary") ?? 0) > limit
        {
            try store.write { _ in
                let bounds = try HistoryBounds.read(db)
                try db.execute("DELETE FROM change_summary")
                try setMeta("history_start_tx", bounds.compacted)
            }
        }
        let bounds = try HistoryBounds.read(db)
        return CompactionReport(
            transactions: folded.transactions, entries: folded.entries,
            summaryObjects: try db.scalar(Int.self, "SELECT count(*) FROM change_summary") ?? 0,
            detailsFrom: ChangeToken(storeID: store.storeID, transaction: bounds.compacted),
            historyStart: ChangeToken(storeID: store.storeID, transaction: bounds.start))
    }

    /// The newest transaction that may be compacted: the smaller (keeping more) of the two rules.
    private func boundary(retention: HistoryRetention, now: Date) throws -> Int64 {
        let db = store.writer
        let bounds = try HistoryBounds.read(db)
        var target = bounds.current
        if let days = retention.keepDays {
            let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
            // The first transaction young enough to keep; everything before it may go.
            let firstKept =
                try db.scalar(
                    Int64?.self, "SELECT min(id) FROM change_transaction WHERE committed_at >= ?", [cutoff]) ?? nil
            target = min(target, (firstKept ?? bounds.current + 1) - 1)
        }
        if let entries = retention.keepEntries {
            let oldestKept = try db.scalar(
                Int64.self, "SELECT tx FROM change_log ORDER BY seq DESC LIMIT 1 OFFSET ?", [max(entries, 1) - 1])
            if let oldestKept { target = min(target, oldestKept - 1) } else { target = min(target, bounds.compacted) }
        }
        return max(target, bounds.compacted)
    }

    /// Folds transactions `(from, through]` into `change_summary` and deletes their details.
    private func fold(from: Int64, through: Int64) throws -> (transactions: Int, entries: Int) {
        let db = store.writer
        var logged: [(ObjectKey, ChangeOperation, PropertyGroups)] = []
        try LogEntry.forEach(db, after: from, through: through) { logged.append(($0.key, $0.operation, $0.groups)) }
        // Existing summary rows come first: they describe what happened before this chunk.
        var net = NetChanges()
        var seen = Set<ObjectKey>()
        for (key, _, _) in logged where seen.insert(key).inserted {
            let state = try db.queryOne(
                "SELECT existed_before, exists_after, groups FROM change_summary WHERE object_type = ? AND object_id = ?",
                LogEntry.arguments(key)
            ) { row in
                NetChanges.State(
                    existedBefore: try row.int64(0) != 0, existsAfter: try row.int64(1) != 0,
                    groups: PropertyGroups(rawValue: Int(try row.int64(2))))
            }
            if let state { net.addSummary(key, state) }
        }
        for (key, operation, groups) in logged { net.add(key, operation, groups) }
        let entries = logged.count
        let upsert = try db.cachedStatement(
            """
            INSERT INTO change_summary (object_type, object_id, existed_before, exists_after, groups) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (object_type, object_id) DO UPDATE SET
              existed_before = excluded.existed_before, exists_after = excluded.exists_after, groups = excluded.groups
            """)
        for (key, state) in net.states {
            upsert.reset()
            try LogEntry.bind(key, to: upsert, at: 1)
            try upsert.bind(Int64(state.existedBefore ? 1 : 0), at: 3)
            try upsert.bind(Int64(state.existsAfter ? 1 : 0), at: 4)
            try upsert.bind(Int64(state.groups.rawValue), at: 5)
            try upsert.run()
        }
        let transactions =
            try db.scalar(
                Int.self, "SELECT count(*) FROM change_transaction WHERE id > ? AND id <= ?", [from, through]) ?? 0
        try db.execute("DELETE FROM change_log WHERE tx > ? AND tx <= ?", [from, through])
        try db.execute("DELETE FROM change_transaction WHERE id > ? AND id <= ?", [from, through])
        try db.execute("DELETE FROM playlist_item_log WHERE tx > ? AND tx <= ?", [from, through])
        try db.execute("DELETE FROM group_log WHERE tx > ? AND tx <= ?", [from, through])
        try setMeta("history_compacted_tx", through)
        return (transactions, entries)
    }

    private func setMeta(_ key: String, _ value: Int64) throws {
        try store.writer.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, String(value)])
    }
}
