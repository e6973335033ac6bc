import Foundation
import ShelfCore
import ShelfDatabase

/// A group cursor: the order's keys (the album artist's, then the name's, for albums by artist;
/// else the name's), and the group ID in the cursor's ID slot.
extension GroupRow {
    /// The keys `query` orders this row by, most significant first (the ID breaks ties).
    func orderKeys(_ query: GroupQuery) -> [[UInt8]] {
        let name = query.useSortTags ? sName : kName
        guard query.byArtist else { return [name] }
        // An album row always has its owner's keys (see GroupAccumulators.rows). With sort tags,
        // the owner's own key follows its sort key, so that an artist whose albums carry
        // different sort tags is not interleaved with another of the same sort name.
        return query.useSortTags ? [sArtist ?? [], artistKey ?? [], name] : [artistKey ?? [], name]
    }

    func cursor(_ query: GroupQuery) -> PageCursor {
        PageCursor(key: orderKeys(query).map { .bytes($0) }, id: TrackID(id.rawValue))
    }

    /// Whether this row comes before `other` in `query`'s ascending order.
    func precedes(_ other: GroupRow, _ query: GroupQuery) -> Bool {
        Self.precedes(orderKeys(query), id.rawValue, other.orderKeys(query), other.id.rawValue)
    }

    /// Whether keys `a` and ID `x` come before keys `b` and ID `y`, ascending.
    static func precedes(_ a: [[UInt8]], _ x: Int64, _ b: [[UInt8]], _ y: Int64) -> Bool {
        for (p, q) in zip(a, b) where p != q { return p.lexicographicallyPrecedes(q) }
        return x < y
    }

    /// The condition that a `mirror_group` row is an album filed under the album artist bound to
    /// its one argument (under each of its album artists when it has several).
    static let ownedBySQL = "id IN (SELECT album_id FROM mirror_album_owner WHERE artist_id = ?)"

    /// The mirror's columns for `query`'s order keys.
    static func orderColumns(_ query: GroupQuery) -> [String] {
        let name = query.useSortTags ? "s_name" : "k_name"
        guard query.byArtist else { return [name] }
        return query.useSortTags ? ["s_artist", "k_artist", name] : ["k_artist", name]
    }
}

extension MirrorQueryEngine: GroupEngine {
    /// The SQL of a view page: a range of one of `mirror_group`'s name indexes.
    package func groupPageSQL(_ query: GroupQuery, cursor: PageCursor?) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        groupPageSQL(query, cursor: cursor, total: nil)
    }

    /// The same with an extra last column: the view's total, from a subquery with its arguments;
    /// `offset` adds an `OFFSET ?` (for a view of one artist, which is small).
    private func groupPageSQL(
        _ query: GroupQuery, cursor: PageCursor?, total: (String, [(any SQLiteBindable)?])?, offset: Bool = false
    ) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        let columns = GroupRow.orderColumns(query)
        let direction = query.descending ? " DESC" : ""
        // Albums by artist name the kind literally: their order's indexes are partial (albums only).
        var conditions = [query.byArtist ? "kind = \(GroupKind.album.code)" : "kind = ?"]
        var arguments: [(any SQLiteBindable)?] = (total?.1 ?? []) + (query.byArtist ? [] : [query.kind.code])
        if let artist = query.artist {
            conditions.append(GroupRow.ownedBySQL)
            arguments.append(artist.rawValue)
        }
        if let cursor, let keys = Self.keys(of: cursor, count: columns.count) {
            let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
            conditions.append(
                "(\(columns.joined(separator: ", ")), id) \(query.descending ? "<" : ">")\(cursor.inclusive ? "=" : "") (\(placeholders))")
            arguments += keys.map { Data($0) } + [cursor.id.rawValue]
        }
        let selected = GroupRow.columns + (total.map { ", (\($0.0))" } ?? "")
        let order = (columns + ["id"]).map { $0 + direction }.joined(separator: ", ")
        return (
            "SELECT \(selected) FROM mirror_group WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT ?" + (offset ? " OFFSET ?" : ""),
            arguments
        )
    }

    /// The byte keys of a group cursor made for an order of `count` keys; nil for another order's.
    private static func keys(of cursor: PageCursor, count: Int) -> [[UInt8]]? {
        let keys = cursor.key.compactMap { part -> [UInt8]? in
            if case .bytes(let key) = part { return key }
            return nil
        }
        return keys.count == count && cursor.key.count == count ? keys : nil
    }

    private func groupTotalSQL(_ query: GroupQuery) -> (String, [(any SQLiteBindable)?]) {
        query.artist.map {
            ("SELECT count(*) FROM mirror_group WHERE kind = ? AND \(GroupRow.ownedBySQL)", [query.kind.code, $0.rawValue])
        } ?? ("SELECT coalesce(sum(count), 0) FROM mirror_group_section WHERE kind = ? AND tags = 0", [query.kind.code])
    }

    /// One statement, the total riding along as its last column (as for track pages); the
    /// look-ahead row that tells whether another page follows is not decoded.
    package func groups(_ query: GroupQuery, after cursor: PageCursor?, limit: Int) throws -> GroupPage {
        try groupPage(query, cursor: cursor, skip: nil, limit: limit)
    }

    /// A page from row `offset` costs the same at any depth: the maintained per-byte counts name
    /// the key byte whose range holds the row, and SQL `OFFSET` skips only within that range (a
    /// few thousand index entries at most), never over the rows before it. A view of one artist
    /// is small and skipped directly.
    package func groups(_ query: GroupQuery, offset: Int, limit: Int) throws -> GroupPage {
        guard query.artist == nil, offset > 0 else { return try groupPage(query, cursor: nil, skip: offset, limit: limit) }
        if query.byArtist {
            // Albums by artist have no maintained counts; their row is found on their covering
            // index alone (skipped rows are index entries, a few per microsecond), then read from it.
            return try db.transaction(.deferred) {
                let columns = GroupRow.orderColumns(query)
                let direction = query.descending ? " DESC" : ""
                let order = (columns + ["id"]).map { $0 + direction }.joined(separator: ", ")
                let start = try db.queryOne(
                    "SELECT \(columns.joined(separator: ", ")), id FROM mirror_group WHERE kind = \(GroupKind.album.code) ORDER BY \(order) LIMIT 1 OFFSET ?",
                    [offset]
                ) { row in
                    PageCursor(
                        key: try (0..<Int32(columns.count)).map { .bytes(try row.bytes($0)) }, id: TrackID(try row.int64(Int32(columns.count))),
                        inclusive: true)
                }
                guard let start else {
                    let total = try db.scalar(Int.self, groupTotalSQL(query).0, groupTotalSQL(query).1) ?? 0
                    return GroupPage(items: [], nextCursor: nil, total: total)
                }
                return try groupPage(query, cursor: start, skip: nil, limit: limit)
            }
        }
        return try db.transaction(.deferred) {
            var counts: [(byte: UInt8, count: Int)] = []
            try db.forEachRow(
                "SELECT section, count FROM mirror_group_section WHERE kind = ? AND tags = ? AND count > 0 ORDER BY section",
                [query.kind.code, Int64(query.useSortTags ? 1 : 0)]
            ) { row in
                counts.append((UInt8(truncatingIfNeeded: try row.int64(0)), Int(try row.int64(1))))
            }
            if query.descending { counts.reverse() }
            var before = 0
            for (byte, count) in counts {
                if offset < before + count {
                    // The row is found on the name index alone (skipped rows are index entries,
                    // not table rows), then the page is read from it.
                    guard let start = try groupKey(query, from: byte, skipping: offset - before) else { break }
                    return try groupPage(query, cursor: start, skip: nil, limit: limit)
                }
                before += count
            }
            return GroupPage(items: [], nextCursor: nil, total: before)
        }
    }

    /// An inclusive cursor at the row `skip` rows into key byte `byte`'s range; nil past it. Keys
    /// are never empty and a key's first byte is its section byte, so one byte's rows are one
    /// range, before or after every other byte's.
    private func groupKey(_ query: GroupQuery, from byte: UInt8, skipping skip: Int) throws -> PageCursor? {
        let column = query.useSortTags ? "s_name" : "k_name"
        let direction = query.descending ? " DESC" : ""
        var range = ""
        var arguments: [(any SQLiteBindable)?] = [query.kind.code]
        if !query.descending {
            range = " AND \(column) >= ?"
            arguments.append(Data([byte]))
        } else if byte < 0xFF {
            range = " AND \(column) < ?"
            arguments.append(Data([byte + 1]))
        }
        return try db.queryOne(
            "SELECT \(column), id FROM mirror_group WHERE kind = ?\(range) ORDER BY \(column)\(direction), id\(direction) LIMIT 1 OFFSET ?",
            arguments + [skip]
        ) { row in PageCursor(key: [.bytes(try row.bytes(0))], id: TrackID(try row.int64(1)), inclusive: true) }
    }

    private func groupPage(_ query: GroupQuery, cursor: PageCursor?, skip: Int?, limit: Int) throws -> GroupPage {
        let totalSQL = groupTotalSQL(query)
        let (sql, arguments) = groupPageSQL(query, cursor: cursor, total: totalSQL, offset: skip != nil)
        var rows: [GroupRow] = []
        var more = false
        var total: Int?
        try db.forEachRow(sql, arguments + [limit + 1] + (skip.map { [$0] } ?? [])) { row in
            if total == nil { total = Int(try row.int64(GroupRow.columnCount)) }
            guard rows.count < limit else {
                more = true
                return
            }
            rows.append(try GroupRow(row: row))
        }
        return GroupPage(
            items: rows.map { $0.item(query) },
            nextCursor: more ? rows.last?.cursor(query) : nil,
            total: try total ?? db.scalar(Int.self, totalSQL.0, totalSQL.1) ?? 0)
    }

    package func groupSections(_ query: GroupQuery) throws -> [SectionInfo] {
        var counts = SectionCounts()
        if query.byArtist {
            // The album artists' letters: one pass over the albums' owner index (no maintained counts).
            try db.forEachRow(
                "SELECT substr(\(GroupRow.orderColumns(query)[0]), 1, 1), count(*) FROM mirror_group WHERE kind = \(GroupKind.album.code)"
                    + (query.artist == nil ? "" : " AND \(GroupRow.ownedBySQL)") + " GROUP BY 1",
                query.artist.map { [$0.rawValue] } ?? []
            ) { row in
                counts.add(row.firstByte(0), Int(try row.int64(1)))
            }
            return counts.infos(descending: query.descending)
        }
        let column = query.useSortTags ? "s_name" : "k_name"
        if query.artist == nil {
            // The whole view: maintained counts, never a count of its rows.
            try db.forEachRow(
                "SELECT section, count FROM mirror_group_section WHERE kind = ? AND tags = ? AND count > 0",
                [query.kind.code, Int64(query.useSortTags ? 1 : 0)]
            ) { row in
                counts.add(UInt8(truncatingIfNeeded: try row.int64(0)), Int(try row.int64(1)))
            }
            return counts.infos(descending: query.descending)
        }
        try db.forEachRow(
            "SELECT substr(\(column), 1, 1), count(*) FROM mirror_group WHERE kind = ?" + (query.artist == nil ? "" : " AND \(GroupRow.ownedBySQL)")
                + " GROUP BY 1",
            [query.kind.code] + (query.artist.map { [$0.rawValue] } ?? [])
        ) { row in
            counts.add(row.firstByte(0), Int(try row.int64(1)))
        }
        return counts.infos(descending: query.descending)
    }

    /// One statement: the album's key and owner come from its group row in subqueries, and its
    /// tracks are one probe of the album index, in disc, track, ID order (missing numbers are
    /// stored as `SortKey.missingNumber`, so they come last, as on the direct path).
    package func albumTracks(_ album: GroupID) throws -> [TrackListItem]? {
        let (sql, arguments) = albumTracksSQL(album)
        let items = try db.query(sql, arguments) { try decode($0, numeric: [], withKey: false).0 }
        return items.isEmpty ? nil : items
    }

    /// The role's rows of `mirror_list` through its value index, with each track's album key.
    package func roleCredits(_ role: String) throws -> [GroupItem] {
        guard let code = MirrorLists.code(role: role) else { return [] }
        var credits = RoleCredits()
        try db.forEachRow(
            "SELECT l.key, l.value, l.track, t.k_album FROM mirror_list l JOIN mirror_track t ON t.id = l.track WHERE l.field = ?", [code]
        ) { row in
            credits.add(key: [UInt8](try row.data(0)), name: try row.string(1), track: try row.int64(2), album: [UInt8](try row.data(3)))
        }
        return credits.items()
    }

    /// One probe of `mirror_group`'s primary key.
    package func group(_ id: GroupID, kind: GroupKind) throws -> GroupItem? {
        try db.queryOne("SELECT \(GroupRow.columns) FROM mirror_group WHERE kind = ? AND id = ?", [kind.code, id.rawValue]) {
            try GroupRow(row: $0)
        }?.item(useSortTags: true)
    }

    /// One statement over `mirror_group`'s primary key for all of them.
    package func groups(_ ids: [GroupID], kind: GroupKind) throws -> [GroupItem] {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
        var byID: [GroupID: GroupItem] = [:]
        try db.forEachRow("SELECT \(GroupRow.columns) FROM mirror_group WHERE kind = ? AND id IN (SELECT value FROM json_each(?))", [kind.code, list]) {
            let item = try GroupRow(row: $0).item(useSortTags: true)
            byID[item.id] = item
        }
        return ids.compactMap { byID[$0] }
    }

    /// One statement over `mirror_group`'s primary key, reading the IDs alone.
    package func existingGroupIDs(_ ids: [GroupID], kind: GroupKind) throws -> Set<GroupID> {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
        return Set(
            try db.int64Column("SELECT id FROM mirror_group WHERE kind = ? AND id IN (SELECT value FROM json_each(?))", [kind.code, list]).map {
                GroupID($0)
            })
    }

    /// The view's IDs from its name index, without reading the rows.
    package func groupIDs(kind: GroupKind) throws -> [GroupID] {
        try db.int64Column("SELECT id FROM mirror_group WHERE kind = ?", [kind.code]).map { GroupID($0) }
    }

    /// The statement `albumTracks` runs (the benchmark steps it raw; the plan test explains it).
    package func albumTracksSQL(_ album: GroupID) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        let owner = "(CASE WHEN k_album_artist = x'FF' THEN k_artist ELSE k_album_artist END)"
        let group = "(SELECT k_artist FROM mirror_group WHERE kind = 0 AND id = ?1)"
        let sql = """
            SELECT \(Self.listColumns), NULL FROM mirror_track
            WHERE k_album = (SELECT k_name FROM mirror_group WHERE kind = 0 AND id = ?1)
              AND CASE WHEN \(group) = ?2 THEN compilation = 1 OR \(owner) = ?2 ELSE compilation = 0 AND \(owner) = \(group) END
            ORDER BY n_disc_number, n_track_number, mirror_track.id
            """
        return (sql, [album.rawValue, Data(GroupMember.variousArtistsKey)])
    }
}

extension DirectQueryEngine: GroupEngine {
    /// Every group computed from all canonical tracks (the direct path is the slow one anyway).
    func allGroupRows() throws -> [GroupRow] {
        let tracks = try db.transaction(.deferred) { try db.query(TrackRow.selectWithoutTexts + TrackRow.present, [], TrackRow.decode) }
        return GroupRow.all(tracks, options: options)
    }

    /// Every group of one view computed from all canonical tracks, in the view's order.
    func groupRows(_ query: GroupQuery) throws -> [GroupRow] { GroupTable.ordered(try allGroupRows(), query) }

    package func groups(_ query: GroupQuery, after cursor: PageCursor?, limit: Int) throws -> GroupPage {
        GroupTable.page(try groupRows(query), query, after: cursor, limit: limit)
    }

    package func groups(_ query: GroupQuery, offset: Int, limit: Int) throws -> GroupPage {
        GroupTable.page(try groupRows(query), query, offset: offset, limit: limit)
    }

    package func groupSections(_ query: GroupQuery) throws -> [SectionInfo] { GroupTable.sections(try groupRows(query), query) }

    package func group(_ id: GroupID, kind: GroupKind) throws -> GroupItem? {
        try allGroupRows().first { $0.kind == kind && $0.id == id }?.item(useSortTags: true)
    }

    package func groups(_ ids: [GroupID], kind: GroupKind) throws -> [GroupItem] {
        let byID = Dictionary(try allGroupRows().filter { $0.kind == kind }.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return ids.compactMap { byID[$0]?.item(useSortTags: true) }
    }

    package func groupIDs(kind: GroupKind) throws -> [GroupID] { try allGroupRows().filter { $0.kind == kind }.map(\.id) }

    package func roleCredits(_ role: String) throws -> [GroupItem] {
        guard let code = MirrorLists.code(role: role) else { return [] }
        var credits = RoleCredits()
        for track in try db.transaction(.deferred, { try db.query(TrackRow.select + TrackRow.present, [], TrackRow.decode) }) {
            for row in MirrorLists.rows(track, options: options) where row.field == code {
                credits.add(key: row.key ?? [], name: row.text ?? "", track: track.id.rawValue, album: SortKey.albumKey(of: track, options: options))
            }
        }
        return credits.items()
    }

    package func albumTracks(_ album: GroupID) throws -> [TrackListItem]? {
        let tracks = try db.transaction(.deferred) { try db.query(TrackRow.selectWithoutTexts + TrackRow.present, [], TrackRow.decode) }
        let members = tracks.filter { track in
            GroupMember(track, options: options).groups.contains { $0.kind == .album && $0.id == album }
        }
        guard !members.isEmpty else { return nil }
        return members.sorted { ($0.discNumber ?? Int.max, $0.trackNumber ?? Int.max, $0.id) < ($1.discNumber ?? Int.max, $1.trackNumber ?? Int.max, $1.id) }
            .map { TrackListItem($0, section: "#") }
    }
}
