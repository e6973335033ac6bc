import Foundation
import ShelfCore
import ShelfDatabase

/// The persistent change history (seed 004): save a token, come back later, and learn exactly what
/// was inserted, updated and deleted since — in order, cheaply, deletions included.
extension Library {
    /// The library's current position in its history; store it after processing what you read.
    ///
    /// ```swift
    /// let token = try await library.currentToken()  // taken before a full read, never after
    /// let everything = try await library.snapshot(LibraryQuery())
    /// let saved = token.description  // shelf1.<store>.<transaction>; `Library.token(_:)` parses it
    /// ```
    public func currentToken() async throws -> ChangeToken {
        let storeID = try await openedStore().storeID
        return try await read { db in
            ChangeToken(storeID: storeID, transaction: try HistoryBounds.read(db).current)
        }
    }

    /// Whether a write committed after `token` may have changed a row of the aggregation views: a
    /// track added, removed, retagged, moved or given a picture. Plays, ratings and stars do not, so a cache of
    /// what the views show (the Subsonic artist index) outlives them. True when the history
    /// after the token is no longer kept, or the token is another store's.
    public func viewsChanged(since token: ChangeToken) async throws -> Bool {
        let storeID = try await openedStore().storeID
        guard token.storeID == storeID else { return true }
        return try await read { db in
            try db.transaction(.deferred) {
                let bounds = try HistoryBounds.read(db)
                guard token.transaction >= max(bounds.start, bounds.compacted) else { return true }
                guard token.transaction < bounds.current else { return false }
                return try db.scalar(Int.self, ScopedGroups.viewRowChangesSinceTransactionSQL, [token.transaction]) == 1
            }
        }
    }

    /// Whether reads of the views now hold every write up to `token`: always when they come from
    /// the store, else once the read mirror has applied the change log through the token's
    /// transaction. The mirror commits after the store, so a read in between still shows the
    /// state before; a cache of what the views show is right as of a token only when this held
    /// before it was read.
    /// Not while an import keeps large groups waiting (their rows are behind the log until it ends).
    public func viewsHold(_ token: ChangeToken) async throws -> Bool {
        guard let mirror = mirrorReaders.withLock({ $0 }) else { return true }
        let status = try await mirrorStatus()
        guard status.state == .ready else { return false }
        let waiting = try await mirror.read { db in try db.scalar(Int.self, "SELECT EXISTS (SELECT 1 FROM mirror_group_pending)") == 1 }
        if waiting { return false }
        let needed = try await read { db in
            try db.scalar(Int64.self, "SELECT seq FROM change_log WHERE tx <= ? ORDER BY seq DESC LIMIT 1", [token.transaction]) ?? 0
        }
        return status.appliedSeq >= needed
    }

    /// When the last write was committed (nil for a library never written): what "modified since"
    /// questions compare with. Per-user writes (stars, plays) count too, so it errs towards "changed".
    public func lastChangeDate() async throws -> Date? {
        try await read { db in
            try db.queryOne("SELECT committed_at FROM change_transaction ORDER BY id DESC LIMIT 1", []) { try $0.get(0) as Date }
        }
    }

    /// Parses a token's string form, with a typed error for text that is not a token.
    ///
    /// ```swift
    /// let token = try Library.token("shelf1.4f0c2a3e-8d7e-4c1b-9a55-0d2b6f3e9c11.42")
    /// ```
    ///
    /// - Throws: `LibraryError.malformedToken` when `text` is not a token.
    public static func token(_ text: String) throws -> ChangeToken {
        guard let token = ChangeToken(text) else { throw LibraryError.malformedToken(text) }
        return token
    }

    /// One `PersistentChange` per committed write transaction after `token`, oldest first.
    ///
    /// ```swift
    /// do {
    ///     let feed = try await library.changes(since: token, limit: 500)
    ///     for change in feed.changes {
    ///         print(change.tracks.inserted, change.tracks.updated.map(\.id), change.tracks.deleted)
    ///     }
    ///     token = feed.token  // and ask again at once while `feed.hasMore`
    /// } catch LibraryError.detailsUnavailable {
    ///     token = try await library.changeSummary(since: token).token  // after refetching its objects
    /// } catch LibraryError.tokenExpired {
    ///     token = try await library.currentToken()  // then refetch everything the client tracks
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - token: the position the client has processed up to (`currentToken()` or a feed's `token`).
    ///   - scope: when given, only the changes seen through these playlists: the playlists
    ///     themselves and their tracks (a track added to one is inserted, one removed is deleted).
    ///   - limit: at most this many transactions; the feed's `token` then says where to continue.
    /// - Throws: `LibraryError.tokenExpired` (too old, another store, or from the future) and
    ///   `.detailsUnavailable` (compacted: use `changeSummary(since:)`); both mean "refetch".
    public func changes(since token: ChangeToken, scope: Set<PlaylistID>? = nil, limit: Int? = nil) async throws -> ChangeFeed {
        if let limit, limit < 1 { throw LibraryError.invalidValue(field: "limit", value: String(limit), reason: "must be ≥ 1") }
        let storeID = try await openedStore().storeID
        let visible = LibraryScope.current
        return try await read { db in
            let history = ChangeHistory(db: db, storeID: storeID)
            var feed =
                if let scope { try history.scopedChanges(since: token, playlists: scope, limit: limit) } else {
                    try history.changes(since: token, limit: limit)
                }
            if !visible.isAll { try Self.narrow(&feed, to: visible, db: db) }
            return feed
        }
    }

    /// A feed as a reader limited to some libraries sees it: a track outside them does not exist
    /// for them, so its insertion is left out and an update (a move out of their libraries, or an
    /// edit of a track they never saw) is a deletion. Deletions pass as they are: the store no
    /// longer knows where a deleted track was, and deleting an ID a client never had changes
    /// nothing for it.
    static func narrow(_ feed: inout ChangeFeed, to scope: LibraryScope, db: Connection) throws {
        var paths: [Int64: String] = [:]
        for change in feed.changes {
            for key in change.tracks.inserted + change.tracks.updated.map(\.id) {
                guard case .track(let id) = key, paths[id.rawValue] == nil else { continue }
                paths[id.rawValue] = try db.scalar(String.self, "SELECT path FROM track WHERE id = ?", [id.rawValue]) ?? ""
            }
        }
        func visible(_ key: ObjectKey) -> Bool {
            guard case .track(let id) = key else { return true }
            return scope.contains(path: paths[id.rawValue] ?? "")
        }
        for index in feed.changes.indices {
            var tracks = feed.changes[index].tracks
            let movedOut = tracks.updated.filter { !visible($0.id) }.map(\.id)
            tracks.inserted.removeAll { !visible($0) }
            tracks.updated.removeAll { !visible($0.id) }
            tracks.deleted += movedOut.filter { !tracks.deleted.contains($0) }
            feed.changes[index].tracks = tracks
        }
    }

    /// Everything since `token` as one net difference per object type (inserted then deleted is
    /// nothing; inserted then updated is inserted; repeated updates are one, with the union of
    /// groups), with the current token. Works across compacted history; scoped summaries need the
    /// per-transaction details.
    public func changeSummary(since token: ChangeToken, scope: Set<PlaylistID>? = nil) async throws -> PersistentChange {
        let storeID = try await openedStore().storeID
        return try await read { db in
            let history = ChangeHistory(db: db, storeID: storeID)
            guard let scope else { return try history.summary(since: token) }
            let feed = try history.scopedChanges(since: token, playlists: scope, limit: nil)
            var net = NetChanges()
            for change in feed.changes {
                for type in ObjectType.allCases {
                    let details = change.details(for: type)
                    for key in details.inserted { net.add(key, .insert, []) }
                    for updated in details.updated { net.add(updated.id, .update, updated.groups) }
                    for key in details.deleted { net.add(key, .delete, []) }
                }
            }
            var summary = PersistentChange(token: feed.token, date: feed.changes.last?.date ?? Date())
            net.apply(to: &summary)
            return summary
        }
    }

    /// Folds per-transaction history older than the retention policy into the net summary, in
    /// chunks (one write transaction each) that never block reads and let other writes interleave.
    @LibraryActor
    public func compactHistory(retention: HistoryRetention? = nil, now: Date = Date()) async throws -> CompactionReport {
        let store = try await store()
        do {
            return try await HistoryCompactor(store: store).compact(retention: retention ?? configuration.historyRetention, now: now)
        } catch {
            throw LibraryError.wrap(error, path: store.location.storePath.path, busyTimeoutMilliseconds: store.busyTimeoutMilliseconds)
        }
    }
}
