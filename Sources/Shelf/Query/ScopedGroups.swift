import Foundation
import ShelfCore
import ShelfDatabase

/// Every row of the aggregation views made from one set of tracks, answering the view questions
/// from memory: the direct path's views (all tracks) and a reader's views within their libraries.
struct GroupTable: Sendable {
    private let byKind: [GroupKind: [GroupRow]]
    /// Each album's member track IDs (an album seen within a scope lists only the scope's tracks).
    let albumMembers: [GroupID: Set<Int64>]

    init(members: [GroupMember]) {
        var accumulators = GroupAccumulators()
        var albums: [GroupID: Set<Int64>] = [:]
        for member in members.sorted(by: { $0.id < $1.id }) {
            accumulators.add(member)
            for key in member.groups where key.kind == .album { albums[key.id, default: []].insert(member.id) }
        }
        byKind = Dictionary(grouping: accumulators.rows(), by: \.kind)
        albumMembers = albums
    }

    /// The rows of one view in its order.
    func rows(_ query: GroupQuery) -> [GroupRow] {
        var rows = (byKind[query.kind] ?? []).filter { query.artist == nil || $0.artistID == query.artist }
        rows.sort { a, b in
            let (x, y) = query.useSortTags ? (a.sName, b.sName) : (a.kName, b.kName)
            return x != y ? x.lexicographicallyPrecedes(y) : a.id < b.id
        }
        return query.descending ? rows.reversed() : rows
    }

    func page(_ query: GroupQuery, after cursor: PageCursor?, limit: Int) -> GroupPage {
        let rows = rows(query)
        var start = 0
        if let cursor, case .bytes(let key)? = cursor.key.first {
            start =
                rows.firstIndex { row in
                    let own = query.useSortTags ? row.sName : row.kName
                    let after = own != key ? key.lexicographicallyPrecedes(own) : cursor.id.rawValue < row.id.rawValue
                    return query.descending ? (own != key ? own.lexicographicallyPrecedes(key) : row.id.rawValue < cursor.id.rawValue) : after
                } ?? rows.count
        }
        return Self.page(rows, from: start, limit: limit, useSortTags: query.useSortTags)
    }

    func page(_ query: GroupQuery, offset: Int, limit: Int) -> GroupPage {
        let rows = rows(query)
        return Self.page(rows, from: min(offset, rows.count), limit: limit, useSortTags: query.useSortTags)
    }

    private static func page(_ rows: [GroupRow], from start: Int, limit: Int, useSortTags: Bool) -> GroupPage {
        let slice = Array(rows[start..<min(rows.count, start + limit)])
        let more = start + slice.count < rows.count
        return GroupPage(
            items: slice.map { $0.item(useSortTags: useSortTags) }, nextCursor: more ? slice.last?.cursor(useSortTags: useSortTags) : nil,
            total: rows.count)
    }

    func sections(_ query: GroupQuery) -> [SectionInfo] {
        var sections: [SectionInfo] = []
        for (index, row) in rows(query).enumerated() {
            let name = SortKey.section(ofKey: query.useSortTags ? row.sName : row.kName)
            if sections.last?.name == name {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(SectionInfo(name: name, firstIndex: index, count: 1))
            }
        }
        return sections
    }

    func group(_ id: GroupID, kind: GroupKind) -> GroupItem? {
        byKind[kind]?.first { $0.id == id }?.item(useSortTags: true)
    }

    func groups(_ ids: [GroupID], kind: GroupKind) -> [GroupItem] {
        let byID = Dictionary((byKind[kind] ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return ids.compactMap { byID[$0]?.item(useSortTags: true) }
    }

    func ids(kind: GroupKind) -> [GroupID] { (byKind[kind] ?? []).map(\.id) }
}

/// The views as a reader limited to some libraries sees them: made from the tracks of their
/// libraries alone (counts, durations, names and pictures of what they can see), kept per scope
/// until the library changes. The mirror's stored views hold every library; only a limited
/// reader pays for a table, once per change of the library.
final class ScopedGroups: Sendable {
    private struct Entry: Sendable {
        let state: String
        let table: GroupTable
        var used: UInt64
    }

    private let entries = Locked<[LibraryScope: Entry]>([:])
    private let clock = Locked<UInt64>(0)
    /// Scopes kept at once; a server has a handful of distinct access lists.
    static let capacity = 8

    /// The table of `scope` as of the engine's current state, made now when it is not kept.
    func table(_ scope: LibraryScope, engine: any QueryEngine) throws -> GroupTable {
        let state = try Self.state(engine)
        let tick = clock.withLock { value -> UInt64 in
            value += 1
            return value
        }
        if let found = entries.withLock({ entries -> GroupTable? in
            guard let entry = entries[scope], entry.state == state else { return nil }
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
            entries[scope] = Entry(state: state, table: table, used: tick)
        }
        return table
    }

    /// What the engine's answers depend on: the mirror's applied change-log position, or the store's.
    private static func state(_ engine: any QueryEngine) throws -> String {
        if let mirror = engine as? MirrorQueryEngine {
            return "m" + (try mirror.db.scalar(String.self, "SELECT value FROM mirror_meta WHERE key = 'applied_seq'") ?? "")
        }
        if let direct = engine as? DirectQueryEngine {
            return "d" + String(try direct.db.scalar(Int64.self, "SELECT coalesce(max(seq), 0) FROM change_log") ?? 0)
        }
        return UUID().uuidString
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
