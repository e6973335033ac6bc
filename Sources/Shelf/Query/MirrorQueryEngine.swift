import Foundation
import ShelfCore
import ShelfDatabase

/// Every browsing question answered in SQL on `mirror.sqlite`: filter, order, paging by keyset
/// (a row-value range on the sort's index) or offset, sections from maintained counts.
package struct MirrorQueryEngine: QueryEngine {
    let db: Connection
    /// Hits up to which a search is ranked by bm25; above it, by tiers (see `search`).
    package var exactRankLimit: Int

    /// An engine reading `mirror.sqlite` through `db`; `exactRankLimit` as `search` describes.
    package init(db: Connection, exactRankLimit: Int = 2_000) {
        self.db = db
        self.exactRankLimit = exactRankLimit
    }

    /// The SQL fragments of one sort (field, direction, sort-tag setting), computed once per
    /// process: building them again for every page cost more than the page itself.
    struct Shape: Sendable {
        let chain: [String]
        let selectList: String
        let orderBy: String
        let numeric: [Bool]
        let sectionColumn: String?
    }

    private struct ShapeKey: Hashable {
        let sort: SortField
        let descending: Bool
        let tags: Bool
    }

    private static let shapes = Locked<[ShapeKey: Shape]>([:])

    /// The columns of a list row, in the order `decode` reads them.
    static let listColumns =
        "mirror_track.id, title, artist, album, album_artist, genre, n_year, n_track_number, n_disc_number, n_duration, n_rating, n_play_count, has_artwork, compilation, "
        // The album key's release tail (`SortKey.releaseMark` on): NULL, so nothing to read, for most rows.
        + "CAST(substr(mirror_track.k_album, nullif(instr(mirror_track.k_album, x'00ff'), 0) + 2) AS TEXT), "
        // The album owner's MusicBrainz ID, from the same kind of tail on its key (none for a
        // compilation, which files under "Various Artists").
        + "CASE WHEN mirror_track.compilation THEN NULL ELSE CAST(substr(\(owner), nullif(instr(\(owner), x'00ff'), 0) + 2) AS TEXT) END"
    private static let owner = "(CASE WHEN mirror_track.k_album_artist = x'ff' THEN mirror_track.k_artist ELSE mirror_track.k_album_artist END)"
    /// How many `listColumns` there are: the chain's key columns follow them.
    static let listColumnCount: Int32 = 16

    static func shape(_ query: LibraryQuery) -> Shape {
        let key = ShapeKey(sort: query.sort, descending: query.descending, tags: query.useSortTags && query.sort.dependsOnSortTags)
        if let known = shapes.withLock({ $0[key] }) { return known }
        let chain = MirrorSchema.chain(query)
        let list = listColumns
        let sectionColumn = MirrorSchema.sectionColumn(query)
        let section = sectionColumn.map { "substr(\($0), 1, 1)" } ?? "NULL"
        let direction = query.descending ? " DESC" : ""
        let shape = Shape(
            chain: chain,
            selectList: "\(list), \(chain.dropLast().joined(separator: ", ")), \(section)",
            orderBy: chain.map { $0 + direction }.joined(separator: ", "),
            numeric: chain.dropLast().map { $0.hasPrefix("n_") },
            sectionColumn: sectionColumn)
        shapes.withLock { $0[key] = shape }
        return shape
    }

    /// The SELECT list of a page: list columns, then the chain's key columns, then the section byte.
    private func selectList(_ query: LibraryQuery) -> String { Self.shape(query).selectList }

    private func orderBy(_ query: LibraryQuery) -> String { Self.shape(query).orderBy }

    /// The SQL of one list page, for the benchmark's raw column and the query-plan test.
    package func pageSQL(_ query: LibraryQuery, cursor: PageCursor?, offset: Bool) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        pageSQL(query, cursor: cursor, offset: offset, total: nil)
    }

    /// The same with an extra last column: the list's total, from a subquery with its arguments.
    private func pageSQL(
        _ query: LibraryQuery, cursor: PageCursor?, offset: Bool, total: (String, [(any SQLiteBindable)?])?
    ) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        var (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        if let cursor { arguments = Self.arguments(cursor) + arguments }
        let key = PageSQLKey(
            shape: ShapeKey(sort: query.sort, descending: query.descending, tags: query.useSortTags && query.sort.dependsOnSortTags),
            filter: filter, cursor: cursor.map { $0.inclusive }, offset: offset, total: total?.0)
        if let sql = Self.pageSQLs.withLock({ $0[key] }) { return (sql, (total?.1 ?? []) + arguments) }
        if let cursor {
            let comparison = query.descending ? (cursor.inclusive ? "<=" : "<") : (cursor.inclusive ? ">=" : ">")
            let chain = Self.shape(query).chain
            filter = "(\(chain.joined(separator: ", "))) \(comparison) (\(chain.map { _ in "?" }.joined(separator: ", "))) AND \(filter)"
        }
        let columns = selectList(query) + (total.map { ", (\($0.0))" } ?? "")
        let sql = "SELECT \(columns) FROM mirror_track WHERE \(filter) ORDER BY \(orderBy(query)) LIMIT ?" + (offset ? " OFFSET ?" : "")
        Self.pageSQLs.withLock { if $0.count < 256 { $0[key] = sql } }
        return (sql, (total?.1 ?? []) + arguments)
    }

    /// What a page's SQL text depends on: composing it again for every page cost a tenth of a
    /// first page. Filter texts hold only placeholders, so the number of entries stays small;
    /// at most 256 are kept.
    private struct PageSQLKey: Hashable {
        let shape: ShapeKey
        let filter: String
        /// nil without a cursor; else whether the cursor's row is included.
        let cursor: Bool?
        let offset: Bool
        let total: String?
    }

    private static let pageSQLs = Locked<[PageSQLKey: String]>([:])

    static func arguments(_ cursor: PageCursor) -> [(any SQLiteBindable)?] {
        keyArguments(cursor.key) + [cursor.id.rawValue]
    }

    /// A cursor's key components as bound values.
    static func keyArguments(_ key: [SortComponent]) -> [(any SQLiteBindable)?] {
        key.map { component -> (any SQLiteBindable)? in
            switch component {
            case .bytes(let bytes): Data(bytes)
            case .number(let value): value
            }
        }
    }

    /// Rows per section, added up by key byte, then listed as `SectionInfo`s in list order (first
    /// indexes accumulated). An array by section ordinal: first paint builds one every time.
    struct SectionCounts {
        private var counts = [Int](repeating: 0, count: SortKey.sectionNames.count)

        /// Adds `count` rows whose key starts with `byte` (nil: a missing key, filed under `#`).
        mutating func add(_ byte: UInt8?, _ count: Int) { counts[SortKey.sectionOrdinal(ofByte: byte ?? 0xFF)] += count }

        func infos(descending: Bool) -> [SectionInfo] {
            var result: [SectionInfo] = []
            var index = 0
            for ordinal in descending ? Array(counts.indices.reversed()) : Array(counts.indices) where counts[ordinal] > 0 {
                result.append(SectionInfo(name: SortKey.sectionNames[ordinal], firstIndex: index, count: counts[ordinal]))
                index += counts[ordinal]
            }
            return result
        }
    }

    /// Which chain components are numbers (the rest are byte keys), computed once per query.
    private func numericChain(_ query: LibraryQuery) -> [Bool] { Self.shape(query).numeric }

    /// Decodes a list row; the sort key only when `withKey` (only a page's last row needs one: it
    /// becomes the next cursor). Pages are the hottest path of a browsing client, so values are
    /// read in place: no intermediate `Data`, no key array for rows that need none.
    func decode(_ row: Row, numeric: [Bool], withKey: Bool = true) throws -> (TrackListItem, [SortComponent]) {
        // Every column read here is NOT NULL in the schema (a missing number is stored as
        // `missingNumber`), so values are read without a type check; text columns may be NULL.
        func number(_ index: Int32) -> Double? {
            let value = row.nonNullDouble(index)
            return value < SortKey.missingNumber ? value : nil
        }
        let chainCount = numeric.count
        var key: [SortComponent] = []
        if withKey {
            key.reserveCapacity(chainCount)
            for offset in 0..<chainCount {
                let index = Self.listColumnCount + Int32(offset)
                key.append(numeric[offset] ? .number(try row.double(index)) : .bytes(try row.bytes(index)))
            }
        }
        let item = TrackListItem(
            id: TrackID(row.nonNullInt64(0)), title: row.optionalString(1), artist: row.optionalString(2), album: row.optionalString(3),
            albumArtist: row.optionalString(4), genre: row.optionalString(5), year: number(6).map { Int($0) },
            trackNumber: number(7).map { Int($0) }, discNumber: number(8).map { Int($0) }, duration: number(9),
            rating: Int(row.nonNullInt64(10)), playCount: Int(row.nonNullInt64(11)), hasArtwork: row.nonNullInt64(12) != 0,
            compilation: row.nonNullInt64(13) != 0, section: row.firstByte(Self.listColumnCount + Int32(chainCount)).map(SortKey.section(ofByte:)) ?? "#",
            releaseID: row.optionalString(14), ownerArtistID: row.optionalString(15))
        return (item, key)
    }

    /// One page: the total rides along as the last column (an uncorrelated subquery SQLite
    /// evaluates once), so that page and total share one statement's snapshot without BEGIN/COMMIT.
    /// The statement asks for one row more than the page to learn whether another page follows;
    /// that row is not decoded.
    private func run(_ query: LibraryQuery, cursor: PageCursor?, offset: Int?, limit: Int) throws -> ListPage {
        // A filtered list's total is counted once per state of the mirror (a reader limited to
        // some libraries filters every list), then rides along as a constant.
        let state = query.filter == .all ? nil : FilteredCounts.state(db)
        let known = state.flatMap { FilteredCounts.total(query.filter, state: $0, db: db) }
        let totalSQL = known.map { ("SELECT ?", [Int64($0)] as [(any SQLiteBindable)?]) } ?? totalQuery(query)
        let (sql, arguments) = pageSQL(query, cursor: cursor, offset: offset != nil, total: totalSQL)
        var items: [TrackListItem] = []
        items.reserveCapacity(limit)
        var lastKey: [SortComponent] = []
        var more = false
        var total: Int?
        let numeric = numericChain(query)
        let totalColumn = Self.listColumnCount + 1 + Int32(numeric.count)
        try db.forEachRow(sql, arguments + [limit + 1] + (offset.map { [$0] } ?? [])) { row in
            if total == nil { total = Int(try row.int64(totalColumn)) }
            guard items.count < limit else {
                more = true
                return
            }
            let (item, key) = try decode(row, numeric: numeric, withKey: items.count == limit - 1)
            items.append(item)
            if items.count == limit { lastKey = key }
        }
        let next = more ? items.last.map { PageCursor(key: lastKey, id: $0.id) } : nil
        if known == nil, let state, let total { FilteredCounts.store(total: total, query.filter, state: state, db: db) }
        return ListPage(items: items, nextCursor: next, total: try total ?? self.total(query))
    }

    package func page(_ query: LibraryQuery, after cursor: PageCursor?, limit: Int) throws -> ListPage {
        try run(query, cursor: cursor, offset: nil, limit: limit)
    }

    /// A deep page of the whole library costs what a section's page does: the maintained counts
    /// name the section holding row `offset`, its anchor is one index probe, and SQL `OFFSET`
    /// skips only within that section. A filtered list has no maintained counts, so its rows
    /// before `offset` are skipped by SQL.
    package func page(_ query: LibraryQuery, offset: Int, limit: Int) throws -> ListPage {
        guard offset > 0, query.filter == .all, Self.shape(query).sectionColumn != nil else {
            return try run(query, cursor: nil, offset: offset, limit: limit)
        }
        return try db.transaction(.deferred) {
            guard let section = try sections(query).last(where: { $0.firstIndex <= offset }),
                let anchor = try anchor(section.name, query)
            else { return try run(query, cursor: nil, offset: offset, limit: limit) }
            guard let start = try key(query, after: anchor.cursor, skipping: offset - anchor.index) else {
                return ListPage(items: [], nextCursor: nil, total: try total(query))
            }
            return try run(query, cursor: start, offset: nil, limit: limit)
        }
    }

    /// An inclusive cursor at the row `skip` rows from `cursor` (inclusive), found on the sort's
    /// index alone: only the key columns are selected, so skipped rows are index entries, never
    /// table rows. Nil past the end. Only for unfiltered lists (the index holds every row).
    private func key(_ query: LibraryQuery, after cursor: PageCursor, skipping skip: Int) throws -> PageCursor? {
        let shape = Self.shape(query)
        let comparison = query.descending ? (cursor.inclusive ? "<=" : "<") : (cursor.inclusive ? ">=" : ">")
        let sql = """
            SELECT \(shape.chain.joined(separator: ", ")) FROM mirror_track
            WHERE (\(shape.chain.joined(separator: ", "))) \(comparison) (\(shape.chain.map { _ in "?" }.joined(separator: ", ")))
            ORDER BY \(shape.orderBy) LIMIT 1 OFFSET ?
            """
        return try db.queryOne(sql, Self.arguments(cursor) + [skip]) { row in
            var key: [SortComponent] = []
            for (index, numeric) in shape.numeric.enumerated() {
                key.append(numeric ? .number(try row.double(Int32(index))) : .bytes(try row.bytes(Int32(index))))
            }
            return PageCursor(key: key, id: TrackID(try row.int64(Int32(shape.numeric.count))), inclusive: true)
        }
    }

    /// Rows in the list: the unfiltered count is kept by sync, a filtered one is counted.
    func total(_ query: LibraryQuery) throws -> Int {
        if query.filter != .all, let known = FilteredCounts.total(query.filter, db: db) { return known }
        let state = query.filter == .all ? nil : FilteredCounts.state(db)
        let (sql, arguments) = totalQuery(query)
        let total = try db.scalar(Int.self, sql, arguments) ?? 0
        if let state { FilteredCounts.store(total: total, query.filter, state: state, db: db) }
        return total
    }

    private func totalQuery(_ query: LibraryQuery) -> (String, [(any SQLiteBindable)?]) {
        if query.filter == .all {
            return ("SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = 'k_title'", [])
        }
        let (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        return ("SELECT count(*) FROM mirror_track WHERE \(filter)", arguments)
    }

    package func snapshot(_ query: LibraryQuery) throws -> [TrackID] {
        let (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        // The unfiltered count is known without counting: reserve it, so the list never regrows.
        let expected = query.filter == .all ? try total(query) : 0
        return try db.int64Column("SELECT id FROM mirror_track WHERE \(filter) ORDER BY \(orderBy(query))", arguments, reserving: expected)
            .map { TrackID($0) }
    }

    /// Each statement here is one read (its own snapshot), so no transaction is needed.
    package func sections(_ query: LibraryQuery) throws -> [SectionInfo] {
        guard let column = Self.shape(query).sectionColumn else {
            let count = try total(query)
            return count > 0 ? [SectionInfo(name: "#", firstIndex: 0, count: count)] : []
        }
        var counts = SectionCounts()
        if query.filter == .all {
            try db.forEachRow("SELECT section, count FROM mirror_section WHERE key_column = ? AND count > 0", [column]) { row in
                counts.add(UInt8(truncatingIfNeeded: try row.int64(0)), Int(try row.int64(1)))
            }
        } else if let known = FilteredCounts.sections(column, query.filter, db: db) {
            counts = known
        } else {
            let state = FilteredCounts.state(db)
            let (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
            try db.forEachRow(
                "SELECT substr(\(column), 1, 1), count(*) FROM mirror_track WHERE \(filter) GROUP BY 1", arguments
            ) { row in
                counts.add(row.firstByte(0), Int(try row.int64(1)))
            }
            if let state { FilteredCounts.store(sections: counts, column, query.filter, state: state, db: db) }
        }
        return counts.infos(descending: query.descending)
    }

    /// One statement: the section's first row by one index probe (a section is one key range),
    /// with the rows before the section counted in a subquery column (from the maintained counts
    /// when unfiltered), so that index and row come from one snapshot.
    package func anchor(_ section: String, _ query: LibraryQuery) throws -> SectionAnchor? {
        // A filtered list's rows before the section come from its sections (counted once per
        // state of the mirror) rather than a count of them on every jump.
        var before: Int?
        if query.filter != .all, Self.shape(query).sectionColumn != nil {
            guard let info = try sections(query).first(where: { $0.name == section }) else { return nil }
            before = info.firstIndex
        }
        guard let (sql, arguments) = anchorSQL(section, query, before: before) else { return nil }
        let numeric = Self.shape(query).numeric
        let beforeColumn = Self.listColumnCount + 1 + Int32(numeric.count)
        guard
            let (item, key, index) = try db.queryOne(
                sql, arguments,
                { row in
                    let (item, key) = try decode(row, numeric: numeric)
                    return (item, key, Int(try row.int64(beforeColumn)))
                })
        else { return nil }
        return SectionAnchor(index: index, cursor: PageCursor(key: key, id: item.id, inclusive: true))
    }

    /// The statement `anchor` runs (the benchmark steps it raw); nil for a section the sort has not.
    package func anchorSQL(_ section: String, _ query: LibraryQuery, before known: Int? = nil) -> (sql: String, arguments: [(any SQLiteBindable)?])? {
        let shape = Self.shape(query)
        let (rest, restArguments) = MirrorFilter.compile(query.filter, db: db)
        var (filter, arguments) = (rest, restArguments)
        var before: (sql: String, arguments: [(any SQLiteBindable)?]) = ("0", [])
        if let column = shape.sectionColumn {
            guard let range = SortKey.byteRange(ofSection: section) else { return nil }
            let lower = Data([range.lowerBound])
            let upper: Data? = range.upperBound < 0xFF ? Data([range.upperBound + 1]) : nil
            filter = "\(column) >= ? AND " + (upper != nil ? "\(column) < ? AND " : "") + filter
            arguments = [lower] + (upper.map { [$0] } ?? []) + arguments
            switch (query.filter == .all, query.descending) {
            case (true, false):
                before = (
                    "SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = ? AND section < ?",
                    [column, Int64(range.lowerBound)]
                )
            case (true, true):
                before = (
                    "SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = ? AND section > ?",
                    [column, Int64(range.upperBound)]
                )
            case (false, false):
                before = ("SELECT count(*) FROM mirror_track WHERE \(column) < ? AND \(rest)", [lower] + restArguments)
            case (false, true):
                guard let upper else { break }
                before = ("SELECT count(*) FROM mirror_track WHERE \(column) >= ? AND \(rest)", [upper] + restArguments)
            }
        } else if section != "#" {
            return nil
        }
        if let known { before = ("SELECT ?", [Int64(known)]) }
        let sql = "SELECT \(shape.selectList), (\(before.sql)) FROM mirror_track WHERE \(filter) ORDER BY \(shape.orderBy) LIMIT 1"
        return (sql, before.arguments + arguments)
    }

    /// The SQL of a playlist page: the items joined to their tracks, ordered by position or by
    /// the sort chain then position (a track may repeat, so the position breaks ties, not the ID).
    /// Own order is a range scan of the items' primary key; a sorted page sorts the playlist's
    /// rows (a temporary B-tree over one playlist, not the library).
    package func playlistPageSQL(
        _ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool, cursor: PageCursor?
    ) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        let shape = Self.shape(query)
        var (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        let keys = (sorted ? Array(shape.chain.dropLast()) : []) + ["i.position"]
        let direction = sorted && query.descending ? " DESC" : ""
        if let cursor {
            let comparison = direction.isEmpty ? (cursor.inclusive ? ">=" : ">") : (cursor.inclusive ? "<=" : "<")
            filter = "(\(keys.joined(separator: ", "))) \(comparison) (\(keys.map { _ in "?" }.joined(separator: ", "))) AND \(filter)"
            arguments = Self.keyArguments(cursor.key) + arguments
        }
        let sql = """
            SELECT \(shape.selectList), i.position FROM mirror_playlist_item i JOIN mirror_track ON mirror_track.id = i.track_id
            WHERE i.playlist_id = ? AND \(filter) ORDER BY \(keys.map { $0 + direction }.joined(separator: ", ")) LIMIT ?
            """
        return (sql, [playlist.rawValue] + arguments)
    }

    package func playlistPage(
        _ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int
    ) throws -> ListPage {
        let (sql, arguments) = playlistPageSQL(playlist, query, sorted: sorted, cursor: cursor)
        let numeric = numericChain(query)
        let positionColumn = Self.listColumnCount + 1 + Int32(numeric.count)
        return try db.transaction(.deferred) {
            var rows: [(TrackListItem, [SortComponent])] = []
            try db.forEachRow(sql, arguments + [limit + 1]) { row in
                var (item, key) = try decode(row, numeric: numeric, withKey: sorted && rows.count == limit - 1)
                if !sorted { item.section = "#" }
                rows.append((item, (sorted ? key : []) + [.number(try row.double(positionColumn))]))
            }
            let more = rows.count > limit
            if more { rows.removeLast() }
            let (filter, filterArguments) = MirrorFilter.compile(query.filter, db: db)
            // Unfiltered, every item's track exists (deleting a track removes its items and names
            // the playlist in the change log), so counting the items' primary key is enough.
            let total =
                query.filter == .all
                ? try db.scalar(Int.self, "SELECT count(*) FROM mirror_playlist_item WHERE playlist_id = ?", [playlist.rawValue]) ?? 0
                : try db.scalar(
                    Int.self,
                    "SELECT count(*) FROM mirror_playlist_item i JOIN mirror_track ON mirror_track.id = i.track_id WHERE i.playlist_id = ? AND \(filter)",
                    [playlist.rawValue] + filterArguments) ?? 0
            let next = more ? rows.last.map { PageCursor(key: $0.1, id: $0.0.id) } : nil
            return ListPage(items: rows.map(\.0), nextCursor: next, total: total)
        }
    }

    package func playlistSections(_ playlist: PlaylistID, _ query: LibraryQuery) throws -> [SectionInfo] {
        let (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        let join = "FROM mirror_playlist_item i JOIN mirror_track ON mirror_track.id = i.track_id WHERE i.playlist_id = ? AND \(filter)"
        return try db.transaction(.deferred) {
            guard let column = Self.shape(query).sectionColumn else {
                let count = try db.scalar(Int.self, "SELECT count(*) \(join)", [playlist.rawValue] + arguments) ?? 0
                return count > 0 ? [SectionInfo(name: "#", firstIndex: 0, count: count)] : []
            }
            var counts = SectionCounts()
            try db.forEachRow("SELECT substr(\(column), 1, 1), count(*) \(join) GROUP BY 1", [playlist.rawValue] + arguments) { row in
                counts.add(row.firstByte(0), Int(try row.int64(1)))
            }
            return counts.infos(descending: query.descending)
        }
    }

    package func hasRows(_ query: LibraryQuery) throws -> Bool {
        let (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
        return try db.scalar(Int.self, "SELECT EXISTS (SELECT 1 FROM mirror_track WHERE \(filter))", arguments) == 1
    }
}

/// The totals and section counts of filtered lists, kept per mirror file and state (its applied
/// change-log position, which every write moves): a reader limited to some libraries narrows every
/// list by a filter, and counting its rows again for each page would cost a scan each time.
/// Bounded per file; a new state starts empty.
enum FilteredCounts {
    private struct Entry {
        var state: String
        var totals: [Filter: Int] = [:]
        var sections: [String: MirrorQueryEngine.SectionCounts] = [:]
    }

    private static let entries = Locked<[String: Entry]>([:])
    private static let capacity = 512

    /// The mirror's state as `db` sees it now (nil when it cannot be read).
    static func state(_ db: Connection) -> String? {
        (try? MirrorStore.appliedSeq(in: db)).flatMap { $0.map(String.init) }
    }

    static func total(_ filter: Filter, state: String? = nil, db: Connection) -> Int? {
        guard let state = state ?? self.state(db) else { return nil }
        return entries.withLock { $0[db.path].flatMap { $0.state == state ? $0.totals[filter] : nil } }
    }

    static func sections(_ column: String, _ filter: Filter, db: Connection) -> MirrorQueryEngine.SectionCounts? {
        guard let state = state(db) else { return nil }
        return entries.withLock { $0[db.path].flatMap { $0.state == state ? $0.sections[column + "\u{0}" + "\(filter)"] : nil } }
    }

    static func store(total: Int, _ filter: Filter, state: String, db: Connection) {
        update(db, state) { entry in entry.totals[filter] = total }
    }

    static func store(sections: MirrorQueryEngine.SectionCounts, _ column: String, _ filter: Filter, state: String, db: Connection) {
        update(db, state) { entry in entry.sections[column + "\u{0}" + "\(filter)"] = sections }
    }

    private static func update(_ db: Connection, _ state: String, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            var entry = entries[db.path] ?? Entry(state: state)
            if entry.state != state { entry = Entry(state: state) }
            if entry.totals.count + entry.sections.count >= capacity { entry = Entry(state: state) }
            change(&entry)
            if entries[db.path] == nil, entries.count >= 64 { entries.removeAll() }
            entries[db.path] = entry
        }
    }
}

/// Compiles a `Filter` into a WHERE clause over the mirror's folded and key columns, with every
/// value bound as a parameter. A missing value (NULL) must count as "no match", as in Swift: plain
/// comparisons already exclude NULL rows, and keep indexes usable; under an odd number of NOTs
/// each comparison is wrapped in `coalesce(…, 0)` so that NOT stays exact.
package enum MirrorFilter {
    /// The WHERE clause and its arguments.
    /// With `db`, a contains-filter whose text is in very many distinct values scans instead of
    /// using the trigram index (see `denseContains`); both forms give the same rows.
    package static func compile(_ filter: Filter, db: Connection? = nil) -> (String, [(any SQLiteBindable)?]) {
        compile(filter, negated: false, db: db)
    }

    static func compile(_ filter: Filter, negated: Bool, db: Connection? = nil) -> (String, [(any SQLiteBindable)?]) {
        func safe(_ sql: String) -> String { negated ? "coalesce(\(sql), 0)" : sql }
        switch filter {
        case .all: return ("1", [])
        case .text(.path, let match):
            switch match {
            case .equals(let text): return ("k_path = ?", [Data(text.utf8)])
            case .contains(let text): return ("instr(k_path, ?) > 0", [Data(text.utf8)])
            case .prefix(let text): return ("substr(k_path, 1, ?) = ?", [text.utf8.count, Data(text.utf8)])
            }
        case .text(let field, let match):
            guard let code = MirrorLists.code(field) else { return displayText(field, match, safe: safe, db: db) }
            let (list, listArguments) = listText(code, match)
            guard !field.isListOnly else { return (list, listArguments) }
            let (display, arguments) = displayText(field, match, safe: safe, db: db)
            return ("(\(display) OR \(list))", arguments + listArguments)
        case .range(let field, let lower, let upper):
            if let code = MirrorLists.code(field) {
                var condition = ["1"]
                var arguments: [(any SQLiteBindable)?] = []
                if let lower {
                    condition.append("value >= ?")
                    arguments.append(lower)
                }
                if let upper {
                    condition.append("value <= ?")
                    arguments.append(upper)
                }
                return (MirrorLists.trackSet(code, condition.joined(separator: " AND ")), arguments)
            }
            let column = "n_" + MirrorSchema.snake(field.rawValue)
            var parts = ["\(column) < ?"]
            var arguments: [(any SQLiteBindable)?] = [SortKey.missingNumber]
            if let lower {
                parts.append("\(column) >= ?")
                arguments.append(lower)
            }
            if let upper {
                parts.append("\(column) <= ?")
                arguments.append(upper)
            }
            return ("(" + parts.joined(separator: " AND ") + ")", arguments)
        case .flag(let field, let value):
            switch field {
            case .compilation: return ("compilation = ?", [Int64(value ? 1 : 0)])
            case .hasArtwork: return ("has_artwork = ?", [Int64(value ? 1 : 0)])
            case .replayGain: return ((value ? "" : "NOT ") + MirrorLists.exists(MirrorLists.replayGainCode), [])
            // The mirror holds no missing track (a filter asking for them goes to the store).
            case .missing: return (value ? "0" : "1", [])
            }
        case .missingText(let field):
            if field == .path { return ("0", []) }
            guard let code = MirrorLists.code(field) else { return ("f_\(MirrorSchema.snake(field.rawValue)) IS NULL", []) }
            let noList = "NOT " + MirrorLists.exists(code)
            return field.isListOnly ? (noList, []) : ("(f_\(MirrorSchema.snake(field.rawValue)) IS NULL AND \(noList))", [])
        case .missingNumber(let field):
            if let code = MirrorLists.code(field) { return ("NOT " + MirrorLists.exists(code), []) }
            return ("n_\(MirrorSchema.snake(field.rawValue)) >= ?", [SortKey.missingNumber])
        case .anyText(let text):
            // Each field through its own index where it can: SQLite unites them (MULTI-INDEX OR).
            return compile(.or(TextField.searchable.map { .text($0, .contains(text)) }), negated: negated, db: db)
        case .and(let filters), .or(let filters):
            guard !filters.isEmpty else { return (filter.isAnd ? "1" : "0", []) }
            let compiled = filters.map { compile($0, negated: negated, db: db) }
            let joiner = filter.isAnd ? " AND " : " OR "
            return ("(" + compiled.map(\.0).joined(separator: joiner) + ")", compiled.flatMap(\.1))
        case .not(let inner):
            let (sql, arguments) = compile(inner, negated: !negated, db: db)
            return ("NOT (\(sql))", arguments)
        }
    }
}

extension MirrorFilter {
    /// A text test on a field's display column (its folded text, with its key where one serves).
    static func displayText(_ field: TextField, _ match: TextMatch, safe: (String) -> String, db: Connection?) -> (String, [(any SQLiteBindable)?]) {
        let column = "f_" + MirrorSchema.snake(field.rawValue)
        switch match {
        case .equals(let text):
            // Values that fold alike share a sort key's body, so bounding the key by it changes
            // no answer and lets the field's sort index find the rows (there is no folded-text index).
            guard let keyColumn = MirrorFilter.keyColumn(field) else { return (safe("\(column) = ?"), [Filter.fold(text)]) }
            let range = SortKey.bodyRange(text)
            return (safe("(\(keyColumn) >= ? AND \(keyColumn) < ? AND \(column) = ?)"), [Data(range.lower), Data(range.upper), Filter.fold(text)])
        case .contains(let text):
            let folded = Filter.fold(text)
            // Three characters or more: the values holding the text come from the trigram
            // index and their rows from the field's sort index; `instr` then checks each row
            // as the scan would (a key may be shared by values that fold differently).
            guard MirrorValues.fields.contains(field), let keyColumn = MirrorFilter.keyColumn(field), !folded.isEmpty,
                !denseContains(field, folded, db: db)
            else {
                return (safe("instr(\(column), ?) > 0"), [folded])
            }
            // Shorter text has no trigram: the field's distinct values are scanned for it instead.
            guard MirrorValues.indexable(folded) else {
                return (safe("(\(keyColumn) IN (\(MirrorValues.shortKeysSQL(field))) AND instr(\(column), ?) > 0)"), [folded, folded])
            }
            return (
                safe("(\(keyColumn) IN (\(MirrorValues.keysSQL(field))) AND instr(\(column), ?) > 0)"),
                [MirrorValues.match(field, folded), folded, folded]
            )
        case .prefix(let text):
            let folded = Filter.fold(text)
            return (safe("substr(\(column), 1, ?) = ?"), [folded.unicodeScalars.count, folded])
        }
    }

    /// A text test on the values of a field's list in `mirror_list` (never NULL, so safe under NOT).
    static func listText(_ code: Int, _ match: TextMatch) -> (String, [(any SQLiteBindable)?]) {
        switch match {
        case .equals(let text): return (MirrorLists.trackSet(code, "value = ?"), [Filter.fold(text)])
        case .contains(let text): return (MirrorLists.trackSet(code, "instr(value, ?) > 0"), [Filter.fold(text)])
        case .prefix(let text):
            let folded = Filter.fold(text)
            return (MirrorLists.trackSet(code, "substr(value, 1, ?) = ?"), [folded.unicodeScalars.count, folded])
        }
    }
}

extension MirrorFilter {
    /// Distinct values beyond which a contains-filter scans: its rows are then dense enough that
    /// walking the sort index finds a page at once, while looking up each of the value's rows
    /// (and rejecting rows whose key it shares, "The Night" with "Night") costs more than the scan.
    static let denseValues = 2_000
    /// Decisions already taken. Either form gives the same rows, so a decision made stale by
    /// later writes costs time at most; the cache is emptied when it grows past 1,024.
    private static let densities = Locked<[String: Bool]>([:])

    /// Whether `folded` is in more than `denseValues` of `field`'s distinct values (one capped
    /// FTS count, about a millisecond); false without a connection.
    static func denseContains(_ field: TextField, _ folded: String, db: Connection?) -> Bool {
        let key = field.rawValue + "\u{0}" + folded
        if let known = densities.withLock({ $0[key] }) { return known }
        guard let db else { return false }
        // A short text counts its values in the distinct values' table (stopping at the limit).
        let count =
            (MirrorValues.indexable(folded)
                ? try? db.scalar(
                    Int.self, "SELECT count(*) FROM (SELECT 1 FROM mirror_value WHERE mirror_value MATCH ? LIMIT ?)",
                    [MirrorValues.match(field, folded), denseValues + 1])
                : try? db.scalar(Int.self, "SELECT count(*) FROM (\(MirrorValues.shortKeysSQL(field)) LIMIT ?)", [folded, denseValues + 1])) ?? 0
        let dense = count > denseValues
        densities.withLock { cache in
            if cache.count >= 1_024 { cache.removeAll() }
            cache[key] = dense
        }
        return dense
    }

    /// The display-key column a text field's equality can also compare (nil for codec: no key).
    static func keyColumn(_ field: TextField) -> String? {
        switch field {
        case .title, .artist, .album, .albumArtist, .composer, .genre: "k_" + MirrorSchema.snake(field.rawValue)
        case .codec, .path, .label, .releaseType, .mood, .mbid, .isrc, .catalogNumber: nil
        }
    }
}

extension Filter {
    var isAnd: Bool {
        if case .and = self { return true }
        return false
    }
}
