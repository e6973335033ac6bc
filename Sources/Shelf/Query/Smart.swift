import Foundation
import ShelfCore
import ShelfDatabase

/// What evaluating smart playlists needs besides the tracks: every smart playlist's rules (rules
/// may refer to other smart playlists) and the moment "in the last N days" counts back from.
package struct SmartContext: Sendable {
    let rules: [PlaylistID: SmartRules]
    let now: Date

    /// A context for evaluating at `now`.
    package init(rules: [PlaylistID: SmartRules], now: Date = Date()) {
        self.rules = rules
        self.now = now
    }

    /// The earliest whole second "in the last `days` days" includes.
    func cutoff(days: Int) -> Double { (now.timeIntervalSince1970 - Double(days) * 86_400).rounded(.down) }

    /// The stable shuffle key of a track in a playlist's random selection (the same arithmetic in
    /// SQL and in Swift; no overflow below 3.4 billion track IDs).
    static func shuffle(_ id: Int64, _ playlist: PlaylistID) -> Int64 { (id * 2_654_435_761 + playlist.rawValue * 40_503) % 4_294_967_296 }

    /// Why a smart playlist's rules cannot be saved, or nil: every referenced playlist exists and
    /// holds tracks (not a folder), limits are positive, and no chain of references leads back
    /// to `id`.
    static func problem(with rules: SmartRules, id: PlaylistID, kinds: [PlaylistID: Playlist.Kind], stored: [PlaylistID: SmartRules]) -> String? {
        for reference in rules.condition.playlists {
            guard let kind = kinds[reference] else { return "refers to playlist \(reference), which does not exist" }
            if kind == .folder { return "refers to folder \(reference), which holds playlists, not tracks" }
        }
        switch rules.limit {
        case .items(let n) where n <= 0: return "a limit must be positive"
        case .size(let n) where n <= 0: return "a limit must be positive"
        case .duration(let seconds) where !(seconds > 0): return "a limit must be positive"
        default: break
        }
        if rules.limit != nil && rules.selection == nil { return "a limit needs a selection (--by)" }
        if case .some = firstLoop(rules.condition.playlists, id: id, stored: stored) { return "refers to itself through other smart playlists" }
        if rules.condition.playlists.contains(id) { return "refers to itself" }
        return nil
    }

    private static func firstLoop(_ start: [PlaylistID], id: PlaylistID, stored: [PlaylistID: SmartRules]) -> PlaylistID? {
        var stack = start
        var seen = Set<PlaylistID>()
        while let next = stack.popLast() {
            if next == id { return next }
            guard seen.insert(next).inserted, let rules = stored[next] else { continue }
            stack += rules.condition.playlists
        }
        return nil
    }
}

extension MirrorQueryEngine {
    /// The SQL listing a smart playlist's track IDs in selection order.
    package func smartSQL(_ id: PlaylistID, _ context: SmartContext) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        let rules = context.rules[id] ?? SmartRules(.filter(.not(.all)))
        let (condition, arguments) = smartCondition(rules.condition, context, negated: false, depth: 0)
        let order: String =
            switch rules.selection {
            case nil: "mirror_track.id"
            case .random?: "((mirror_track.id * 2654435761 + \(id.rawValue * 40_503)) % 4294967296), mirror_track.id"
            case .mostPlayed?: "n_play_count DESC, mirror_track.id"
            case .leastPlayed?: "n_play_count, mirror_track.id"
            case .highestRated?: "n_rating DESC, mirror_track.id"
            case .mostRecentlyAdded?: "n_date_added DESC, mirror_track.id"
            case .mostRecentlyPlayed?: "(CASE WHEN n_last_played < 9e18 THEN n_last_played ELSE -1 END) DESC, mirror_track.id"
            }
        switch rules.limit {
        case nil:
            return ("SELECT mirror_track.id FROM mirror_track WHERE \(condition) ORDER BY \(order)", arguments)
        case .items(let count)?:
            return ("SELECT mirror_track.id FROM mirror_track WHERE \(condition) ORDER BY \(order) LIMIT \(count)", arguments)
        case .duration(let limit)?:
            return (running("n_duration", order: order, condition: condition), arguments + [limit])
        case .size(let limit)?:
            return (running("n_file_size", order: order, condition: condition), arguments + [limit])
        }
    }

    /// Tracks in order while the running total of `column` (missing values as 0) stays within
    /// the limit, which is the statement's last argument.
    private func running(_ column: String, order: String, condition: String) -> String {
        """
        SELECT id FROM (SELECT mirror_track.id AS id, row_number() OVER (ORDER BY \(order)) AS position,
          sum(CASE WHEN \(column) < 9e18 THEN \(column) ELSE 0 END) OVER (ORDER BY \(order) ROWS UNBOUNDED PRECEDING) AS total
          FROM mirror_track WHERE \(condition))
        WHERE total <= ? ORDER BY position
        """
    }

    private func smartCondition(_ condition: SmartCondition, _ context: SmartContext, negated: Bool, depth: Int) -> (String, [(any SQLiteBindable)?]) {
        switch condition {
        case .filter(let filter):
            return MirrorFilter.compile(filter, negated: negated, db: db)
        case .inLastDays(let field, let days):
            return MirrorFilter.compile(.range(field, lower: context.cutoff(days: days), upper: nil), negated: negated)
        case .inPlaylist(let playlist), .notInPlaylist(let playlist):
            let members: (String, [(any SQLiteBindable)?])
            if context.rules[playlist] != nil, depth < 32 {
                // Saving rejects loops; the depth bound only guards rules written around that check.
                let (sql, arguments) = smartSQLInner(playlist, context, depth: depth + 1)
                members = ("mirror_track.id IN (\(sql))", arguments)
            } else {
                members = ("mirror_track.id IN (SELECT track_id FROM mirror_playlist_item WHERE playlist_id = ?)", [playlist.rawValue])
            }
            if case .notInPlaylist = condition { return ("NOT \(members.0)", members.1) }
            return members
        case .all(let conditions), .any(let conditions):
            let isAll = if case .all = condition { true } else { false }
            guard !conditions.isEmpty else { return (isAll ? "1" : "0", []) }
            let parts = conditions.map { smartCondition($0, context, negated: negated, depth: depth) }
            return ("(" + parts.map(\.0).joined(separator: isAll ? " AND " : " OR ") + ")", parts.flatMap(\.1))
        case .not(let inner):
            let (sql, arguments) = smartCondition(inner, context, negated: !negated, depth: depth)
            return ("NOT (\(sql))", arguments)
        }
    }

    /// A referenced smart playlist's IDs as a subquery (aliased, so that its `mirror_track` does
    /// not capture the outer one).
    private func smartSQLInner(_ id: PlaylistID, _ context: SmartContext, depth: Int) -> (String, [(any SQLiteBindable)?]) {
        let (sql, arguments) = smartSQL(id, context)
        return ("SELECT id FROM (\(sql))", arguments)
    }

    package func smartTracks(_ id: PlaylistID, _ context: SmartContext) throws -> [TrackID] {
        let (sql, arguments) = smartSQL(id, context)
        return try db.query(sql, arguments) { TrackID(try $0.int64(0)) }
    }
}

extension DirectQueryEngine {
    package func smartTracks(_ id: PlaylistID, _ context: SmartContext) throws -> [TrackID] {
        try db.transaction(.deferred) {
            let tracks = try db.query(TrackRow.selectWithoutTexts + TrackRow.present, [], TrackRow.decode)
            var members: [PlaylistID: Set<TrackID>] = [:]
            try db.forEachRow("SELECT playlist_id, track_id FROM playlist_item") {
                members[PlaylistID(try $0.int64(0)), default: []].insert(TrackID(try $0.int64(1)))
            }
            var evaluated: [PlaylistID: [TrackID]] = [:]
            func evaluate(_ id: PlaylistID, depth: Int) -> [TrackID] {
                if let known = evaluated[id] { return known }
                let rules = context.rules[id] ?? SmartRules(.filter(.not(.all)))
                func holds(_ condition: SmartCondition, _ track: Track) -> Bool {
                    switch condition {
                    case .filter(let filter): return filter.matches(track)
                    case .inLastDays(let field, let days): return Filter.range(field, lower: context.cutoff(days: days), upper: nil).matches(track)
                    case .inPlaylist(let playlist), .notInPlaylist(let playlist):
                        let inside =
                            context.rules[playlist] != nil && depth < 32
                            ? Set(evaluate(playlist, depth: depth + 1)).contains(track.id)
                            : members[playlist]?.contains(track.id) ?? false
                        if case .notInPlaylist = condition { return !inside }
                        return inside
                    case .all(let conditions): return conditions.allSatisfy { holds($0, track) }
                    case .any(let conditions): return conditions.contains { holds($0, track) }
                    case .not(let inner): return !holds(inner, track)
                    }
                }
                var chosen = tracks.filter { holds(rules.condition, $0) }
                func key(_ t: Track) -> (Double, Int64) {
                    switch rules.selection {
                    case nil: (0, t.id.rawValue)
                    case .random?: (Double(SmartContext.shuffle(t.id.rawValue, id)), t.id.rawValue)
                    case .mostPlayed?: (-Double(t.playCount), t.id.rawValue)
                    case .leastPlayed?: (Double(t.playCount), t.id.rawValue)
                    case .highestRated?: (-Double(t.rating), t.id.rawValue)
                    case .mostRecentlyAdded?: (-NumberField.seconds(t.dateAdded), t.id.rawValue)
                    case .mostRecentlyPlayed?: (-(t.lastPlayed.map(NumberField.seconds) ?? -1), t.id.rawValue)
                    }
                }
                chosen.sort { key($0) < key($1) }
                switch rules.limit {
                case nil: break
                case .items(let count)?: chosen = Array(chosen.prefix(count))
                case .duration(let limit)?:
                    var total = 0.0
                    chosen = Array(
                        chosen.prefix {
                            total += $0.duration ?? 0
                            return total <= limit
                        })
                case .size(let limit)?:
                    var total = 0.0
                    chosen = Array(
                        chosen.prefix {
                            total += Double($0.fileSize)
                            return total <= Double(limit)
                        })
                }
                let ids = chosen.map(\.id)
                evaluated[id] = ids
                return ids
            }
            return evaluate(id, depth: 0)
        }
    }
}

/// A smart playlist's page: in its own (selection) order, the cursor holding the position, or
/// sorted like any list, the cursor holding the sort key. Both engines page the same evaluated
/// contents, so they agree wherever `smartTracks` agrees.
enum SmartPages {
    /// Own order: the positions of `ordered` whose tracks pass `members` (nil: all), after the
    /// cursor's position.
    static func ownOrderSlice(_ ordered: [TrackID], members: Set<TrackID>?, after cursor: PageCursor?, limit: Int)
        -> (ids: [(TrackID, Int)], total: Int, next: PageCursor?)
    {
        let kept = ordered.enumerated().filter { members?.contains($0.element) ?? true }.map { ($0.element, $0.offset) }
        var start = 0
        if case .number(let position)? = cursor?.key.first { start = kept.firstIndex { Double($0.1) > position } ?? kept.count }
        let slice = Array(kept[start..<min(kept.count, start + limit)])
        let next = start + slice.count < kept.count ? slice.last.map { PageCursor(key: [.number(Double($0.1))], id: $0.0) } : nil
        return (slice, kept.count, next)
    }
}

extension MirrorQueryEngine {
    package func smartPage(
        _ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int
    ) throws -> ListPage {
        try db.transaction(.deferred) {
            let (smart, smartArguments) = smartSQL(id, context)
            var (filter, arguments) = MirrorFilter.compile(query.filter, db: db)
            filter = "mirror_track.id IN (SELECT id FROM (\(smart))) AND \(filter)"
            arguments = smartArguments + arguments
            if !sorted {
                let ordered = try db.query(smart, smartArguments) { TrackID(try $0.int64(0)) }
                let members =
                    query.filter == .all
                    ? nil
                    : Set(
                        try db.query("SELECT mirror_track.id FROM mirror_track WHERE \(filter)", arguments) {
                            TrackID(try $0.int64(0))
                        })
                let (slice, total, next) = SmartPages.ownOrderSlice(ordered, members: members, after: cursor, limit: limit)
                var items: [TrackID: TrackListItem] = [:]
                let ids = slice.map { $0.0.rawValue }
                if !ids.isEmpty {
                    try db.forEachRow("SELECT \(Self.listColumns), NULL FROM mirror_track WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ", ")))", ids) {
                        row in
                        let item = try decode(row, numeric: [], withKey: false).0
                        items[item.id] = item
                    }
                }
                return ListPage(items: slice.compactMap { items[$0.0] }, nextCursor: next, total: total)
            }
            let shape = Self.shape(query)
            let total = try db.scalar(Int.self, "SELECT count(*) FROM mirror_track WHERE \(filter)", arguments) ?? 0
            if let cursor {
                let comparison = query.descending ? (cursor.inclusive ? "<=" : "<") : (cursor.inclusive ? ">=" : ">")
                filter = "(\(shape.chain.joined(separator: ", "))) \(comparison) (\(shape.chain.map { _ in "?" }.joined(separator: ", "))) AND \(filter)"
                arguments = Self.arguments(cursor) + arguments
            }
            var rows: [(TrackListItem, [SortComponent])] = []
            try db.forEachRow("SELECT \(shape.selectList) FROM mirror_track WHERE \(filter) ORDER BY \(shape.orderBy) LIMIT ?", arguments + [limit + 1]) {
                row in
                rows.append(try decode(row, numeric: shape.numeric, withKey: rows.count == limit - 1))
            }
            let more = rows.count > limit
            if more { rows.removeLast() }
            return ListPage(items: rows.map(\.0), nextCursor: more ? rows.last.map { PageCursor(key: $0.1, id: $0.0.id) } : nil, total: total)
        }
    }
}

extension MirrorQueryEngine {
    package func smartSections(_ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery) throws -> [SectionInfo] {
        try db.transaction(.deferred) {
            let (smart, smartArguments) = smartSQL(id, context)
            let (filter, filterArguments) = MirrorFilter.compile(query.filter, db: db)
            let scope = "FROM mirror_track WHERE mirror_track.id IN (SELECT id FROM (\(smart))) AND \(filter)"
            let arguments = smartArguments + filterArguments
            guard let column = Self.shape(query).sectionColumn else {
                let count = try db.scalar(Int.self, "SELECT count(*) \(scope)", arguments) ?? 0
                return count > 0 ? [SectionInfo(name: "#", firstIndex: 0, count: count)] : []
            }
            var counts = SectionCounts()
            try db.forEachRow("SELECT substr(\(column), 1, 1), count(*) \(scope) GROUP BY 1", arguments) { row in
                counts.add(row.firstByte(0), Int(try row.int64(1)))
            }
            return counts.infos(descending: query.descending)
        }
    }
}

extension DirectQueryEngine {
    package func smartSections(_ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery) throws -> [SectionInfo] {
        try db.transaction(.deferred) {
            let members = Set(try smartTracks(id, context))
            return Self.sections(of: try rows(query).filter { members.contains($0.track.id) }, field: query.sort)
        }
    }

    package func smartPage(
        _ id: PlaylistID, _ context: SmartContext, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int
    ) throws -> ListPage {
        try db.transaction(.deferred) {
            let ordered = try smartTracks(id, context)
            let members = Set(ordered)
            let rows = try rows(query).filter { members.contains($0.track.id) }
            if sorted {
                let start = cursor.map { c in rows.firstIndex { isAfter($0, c, descending: query.descending) } ?? rows.count } ?? 0
                return makePage(rows, from: start, limit: limit, field: query.sort)
            }
            let byID = Dictionary(rows.map { ($0.track.id, $0.track) }, uniquingKeysWith: { first, _ in first })
            let (slice, total, next) = SmartPages.ownOrderSlice(ordered, members: Set(byID.keys), after: cursor, limit: limit)
            return ListPage(items: slice.compactMap { byID[$0.0].map { TrackListItem($0, section: "#") } }, nextCursor: next, total: total)
        }
    }
}
