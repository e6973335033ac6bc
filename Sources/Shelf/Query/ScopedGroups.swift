import Foundation
import ShelfCore
import ShelfDatabase

/// Every row of the aggregation views made from one set of tracks, answering the view questions
/// from memory: the direct path's views (all tracks) and a reader's views within their libraries.
struct GroupTable: Sendable {
    private let byKind: [GroupKind: [GroupRow]]
    private let byID: [GroupKind: [GroupID: GroupRow]]
    /// Each view's rows in ascending order, by sort names (`true`) and by display names, sorted
    /// once when the table is made, so that a page is a slice, not a sort.
    private let ordered: [GroupKind: [Bool: [GroupRow]]]
    /// The albums by album artist, with sort tags (`true`) and without, sorted once too.
    private let albumsByArtist: [Bool: [GroupRow]]
    /// Each album's member track IDs (an album seen within a scope lists only the scope's tracks).
    let albumMembers: [GroupID: Set<Int64>]

    init(members: [GroupMember]) {
        var accumulators = GroupAccumulators()
        var albums: [GroupID: Set<Int64>] = [:]
        for member in members.sorted(by: { $0.id < $1.id }) {
            accumulators.add(member)
            for key in member.groups where key.kind == .album { albums[key.id, default: []].insert(member.id) }
        }
        let byKind = Dictionary(grouping: accumulators.rows(), by: \.kind)
        self.byKind = byKind
        byID = byKind.mapValues { rows in Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        ordered = byKind.mapValues { rows in
            var orders: [Bool: [GroupRow]] = [:]
            for tags in [true, false] {
                orders[tags] = rows.sorted { a, b in
                    let (x, y) = tags ? (a.sName, b.sName) : (a.kName, b.kName)
                    return x != y ? x.lexicographicallyPrecedes(y) : a.id < b.id
                }
            }
            return orders
        }
        let albumRows = byKind[.album] ?? []
        albumsByArtist = Dictionary(
            uniqueKeysWithValues: [true, false].map { tags in
                let query = GroupQuery(kind: .album, useSortTags: tags, byArtist: true)
                return (tags, albumRows.sorted { $0.precedes($1, query) })
            })
        albumMembers = albums
    }

    /// The rows of one view in its order.
    func rows(_ query: GroupQuery) -> [GroupRow] {
        var rows = (query.byArtist ? albumsByArtist[query.useSortTags] : ordered[query.kind]?[query.useSortTags]) ?? []
        if let artist = query.artist { rows = rows.filter { $0.isOwned(by: artist) } }
        return query.descending ? rows.reversed() : rows
    }

    func page(_ query: GroupQuery, after cursor: PageCursor?, limit: Int) -> GroupPage { Self.page(rows(query), query, after: cursor, limit: limit) }

    func page(_ query: GroupQuery, offset: Int, limit: Int) -> GroupPage { Self.page(rows(query), query, offset: offset, limit: limit) }

    func sections(_ query: GroupQuery) -> [SectionInfo] { Self.sections(rows(query), query) }

    /// `rows` of one kind in `query`'s order (what a table keeps sorted; the direct path sorts
    /// the one view it is asked for).
    static func ordered(_ rows: [GroupRow], _ query: GroupQuery) -> [GroupRow] {
        var rows = rows.filter { $0.kind == query.kind && (query.artist == nil || query.artist.map($0.isOwned(by:)) == true) }
        rows.sort { $0.precedes($1, query) }
        return query.descending ? rows.reversed() : rows
    }

    /// A page of a view's `rows` (in its order) after `cursor`.
    static func page(_ rows: [GroupRow], _ query: GroupQuery, after cursor: PageCursor?, limit: Int) -> GroupPage {
        var start = 0
        let keys = cursor?.key.compactMap { part -> [UInt8]? in
            if case .bytes(let key) = part { return key }
            return nil
        }
        if let cursor, let keys, !keys.isEmpty {
            start =
                rows.firstIndex { row in
                    let own = row.orderKeys(query)
                    if cursor.inclusive && own == keys && row.id.rawValue == cursor.id.rawValue { return true }
                    return query.descending
                        ? GroupRow.precedes(own, row.id.rawValue, keys, cursor.id.rawValue)
                        : GroupRow.precedes(keys, cursor.id.rawValue, own, row.id.rawValue)
                } ?? rows.count
        }
        return Self.page(rows, from: start, limit: limit, query: query)
    }

    /// A page of a view's `rows` (in its order) from row `offset`.
    static func page(_ rows: [GroupRow], _ query: GroupQuery, offset: Int, limit: Int) -> GroupPage {
        page(rows, from: min(offset, rows.count), limit: limit, query: query)
    }

    private static func page(_ rows: [GroupRow], from start: Int, limit: Int, query: GroupQuery) -> GroupPage {
        let slice = Array(rows[start..<min(rows.count, start + limit)])
        let more = start + slice.count < rows.count
        return GroupPage(items: slice.map { $0.item(query) }, nextCursor: more ? slice.last?.cursor(query) : nil, total: rows.count)
    }

    /// The sections of a view's `rows` (in its order).
    static func sections(_ rows: [GroupRow], _ query: GroupQuery) -> [SectionInfo] {
        var sections: [SectionInfo] = []
        for (index, row) in rows.enumerated() {
            let name = SortKey.section(ofKey: row.orderKeys(query)[0])
            if sections.last?.name == name {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(SectionInfo(name: name, firstIndex: index, count: 1))
            }
        }
        return sections
    }

    func group(_ id: GroupID, kind: GroupKind) -> GroupItem? {
        byID[kind]?[id]?.item(useSortTags: true)
    }

    func groups(_ ids: [GroupID], kind: GroupKind) -> [GroupItem] {
        let rows = byID[kind] ?? [:]
        return ids.compactMap { rows[$0]?.item(useSortTags: true) }
    }

    func ids(kind: GroupKind) -> [GroupID] { (byKind[kind] ?? []).map(\.id) }

    func existing(_ ids: [GroupID], kind: GroupKind) -> Set<GroupID> {
        let rows = byID[kind] ?? [:]
        return Set(ids.filter { rows[$0] != nil })
    }
}

/// The views as a reader limited to some libraries sees them: made from the tracks of their
/// libraries alone (counts, durations, names and pictures of what they can see), kept per scope
/// until the library changes. The mirror's stored views hold every library; only a limited
/// reader pays for a table, once per change of the library.
final class ScopedGroups: Sendable {
    private struct Entry: Sendable {
        /// The change-log position the engine was at when the table was made.
        let builtAt: Int64
        /// The store's change-log position up to which no change touched the views (play counts,
        /// ratings, stars and pictures do not): the table answers for any mirror state up to it.
        var validThrough: Int64
        let table: GroupTable
        var used: UInt64
    }

    private let entries = Locked<[LibraryScope: Entry]>([:])
    private let clock = Locked<UInt64>(0)
    /// Scopes kept at once; a server has a handful of distinct access lists.
    static let capacity = 8

    /// Where the kept table of `scope` was made (nil when none is kept), for `confirm`.
    func builtAt(_ scope: LibraryScope) -> Int64? { entries.withLock { $0[scope]?.builtAt } }

    /// Notes that no change up to store position `seq` touched the views of `scope`'s table.
    func confirm(_ scope: LibraryScope, through seq: Int64) {
        entries.withLock { entries in
            if let entry = entries[scope], entry.validThrough < seq { entries[scope]?.validThrough = seq }
        }
    }

    /// The store's changes after `seq` that may change a view: tracks inserted or deleted, and
    /// updates of their tags or files (a play, a rating, a star or a picture changes no row of
    /// the views this table holds). The SQL for `Library.withGroups`.
    static let viewChangesSQL = trackChangesSQL(beyond: [.artwork, .playStats, .userData])

    /// Whether the change log holds, after the bound position, a track inserted or deleted, or
    /// updated in any group other than `ignored`: the question a cache of what tracks show asks
    /// before it answers again.
    static func trackChangesSQL(beyond ignored: PropertyGroups, after column: String = "seq") -> String {
        """
        SELECT EXISTS (SELECT 1 FROM change_log WHERE \(column) > ? AND object_type = \(ObjectType.track.rawValue)
          AND NOT (op = \(ChangeOperation.update.rawValue) AND (groups & ~\(ignored.rawValue)) = 0))
        """
    }

    /// Whether a view row may have changed after a transaction (a change token's position), on the
    /// log's transaction index: pictures count here, since a view row names the track whose
    /// picture represents it.
    static let viewRowChangesSinceTransactionSQL = trackChangesSQL(beyond: [.playStats, .userData], after: "tx")

    /// The table of `scope` as of the engine's current state, made now when the kept one is stale.
    func table(_ scope: LibraryScope, engine: any QueryEngine) throws -> GroupTable {
        let state = try Self.state(engine)
        let tick = clock.withLock { value -> UInt64 in
            value += 1
            return value
        }
        if let found = entries.withLock({ entries -> GroupTable? in
            guard let entry = entries[scope], state >= 0, entry.builtAt == state || state <= entry.validThrough else { return nil }
            entries[scope]?.used = tick
            return entry.table
        }) {
            return found
        }
        let table = GroupTable(members: try Self.members(scope, engine: engine))
        entries.withLock { entries in
            if entries[scope] == nil, entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key {
                entries[oldest] = nil
            }
            entries[scope] = Entry(builtAt: state, validThrough: state, table: table, used: tick)
        }
        return table
    }

    /// The change-log position the engine's answers are at: the mirror's applied one, or the
    /// store's last (-1 when neither can be read, which no kept table matches).
    private static func state(_ engine: any QueryEngine) throws -> Int64 {
        if let mirror = engine as? MirrorQueryEngine {
            return try MirrorStore.appliedSeq(in: mirror.db) ?? -1
        }
        if let direct = engine as? DirectQueryEngine {
            return try MirrorStore.currentSeq(in: direct.db)
        }
        return -1
    }

    /// The members of every view within `scope`, from the mirror's rows or the store's.
    private static func members(_ scope: LibraryScope, engine: any QueryEngine) throws -> [GroupMember] {
        if let mirror = engine as? MirrorQueryEngine {
            let (condition, arguments) = MirrorFilter.compile(scope.filter, db: mirror.db)
            return try mirror.db.query("SELECT \(GroupMember.columns) FROM mirror_track WHERE \(condition)", arguments) { try GroupMember(row: $0) }
        }
        guard let direct = engine as? DirectQueryEngine else { return [] }
        let tracks = try direct.db.transaction(.deferred) { try direct.db.query(TrackRow.selectWithoutTexts + TrackRow.present, [], TrackRow.decode) }
        return tracks.filter { scope.contains(path: $0.path) }.map { GroupMember($0, options: direct.options) }
    }
}
