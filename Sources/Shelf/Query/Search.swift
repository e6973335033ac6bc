import Foundation
import ShelfCore
import ShelfDatabase

/// How search results are ordered, and what a search cursor holds.
///
/// Scoring every hit with bm25 costs about 2.5 µs a hit, so a common prefix ("a", "the", "lo")
/// with tens of thousands of hits would take hundreds of milliseconds before the first row.
/// Ranking therefore depends on how many hits there are (in scope):
/// - up to `exactRankLimit`: bm25 with title and artist weighted above the rest
///   (`SearchDocument.weights`), ties by track ID;
/// - above it, tiers: every word in the title (or its sort tag) first, then every word in the
///   artist (or its sort tags), then the rest; by track ID inside a tier. Each tier is an FTS
///   query read in rowid order, which SQLite stops after one page instead of scoring every hit.
/// The cursor records the mode, so a list keeps its order while being paged.
enum SearchRank {
    static let exact = 0.0
    static let tiered = 1.0
    static let tierCount = 3

    /// The FTS5 expression of one tier of `query`.
    static func tierExpression(_ tier: Int, _ query: SearchQuery) -> String {
        let titles = query.matchExpression(in: SearchDocument.tierColumns[0])
        let artists = query.matchExpression(in: SearchDocument.tierColumns[1])
        switch tier {
        case 0: return titles
        case 1: return "(\(artists)) NOT (\(titles))"
        default: return "(\(query.matchExpression)) NOT (\(titles)) NOT (\(artists))"
        }
    }
}

extension MirrorQueryEngine {
    /// The WHERE clause of a search scope over `mirror_track`.
    private func scopeClause(_ scope: SearchScope) -> (String, [(any SQLiteBindable)?]) {
        var (sql, arguments) = MirrorFilter.compile(scope.filter, db: db)
        if let playlist = scope.playlist {
            sql = "mirror_track.id IN (SELECT track_id FROM mirror_playlist_item WHERE playlist_id = ?) AND \(sql)"
            arguments = [playlist.rawValue] + arguments
        }
        return (sql, arguments)
    }

    private static let from = "FROM mirror_search JOIN mirror_track ON mirror_track.id = mirror_search.rowid"

    /// What a count of hits reads: the index alone when the scope is the whole library (a join
    /// would look every hit up in `mirror_track`).
    private func countFrom(_ scope: SearchScope) -> String {
        scope.filter == .all && scope.playlist == nil ? "FROM mirror_search" : Self.from
    }

    /// The SQL of a search page in either mode, for the benchmark's raw column and the plan test.
    package func searchSQL(
        _ search: SearchQuery, scope: SearchScope, exact: Bool, tier: Int = 0
    ) -> (sql: String, arguments: [(any SQLiteBindable)?]) {
        let (scopeSQL, scopeArguments) = scopeClause(scope)
        if exact {
            let weights = SearchDocument.weights.map { String($0) }.joined(separator: ", ")
            return (
                """
                SELECT \(Self.listColumns), NULL, bm25(mirror_search, \(weights)) AS score \(Self.from)
                WHERE mirror_search MATCH ? AND \(scopeSQL) AND (score, mirror_search.rowid) > (?, ?)
                ORDER BY score, mirror_search.rowid LIMIT ?
                """, [search.matchExpression] + scopeArguments
            )
        }
        return (
            """
            SELECT \(Self.listColumns), NULL \(Self.from)
            WHERE mirror_search MATCH ? AND \(scopeSQL) AND mirror_search.rowid > ?
            ORDER BY mirror_search.rowid LIMIT ?
            """, [SearchRank.tierExpression(tier, search)] + scopeArguments
        )
    }

    package func search(_ search: SearchQuery, scope: SearchScope, after cursor: PageCursor?, limit: Int) throws -> ListPage {
        guard !search.isEmpty else { return ListPage(items: [], nextCursor: nil, total: 0) }
        return try db.transaction(.deferred) {
            let (scopeSQL, scopeArguments) = scopeClause(scope)
            // Counting stops one past the limit: what decides the mode costs no more than the limit.
            let capped =
                try db.scalar(
                    Int.self, "SELECT count(*) FROM (SELECT 1 \(countFrom(scope)) WHERE mirror_search MATCH ? AND \(scopeSQL) LIMIT ?)",
                    [search.matchExpression] + scopeArguments + [exactRankLimit + 1]) ?? 0
            let exact: Bool
            if case .number(let mode)? = cursor?.key.first { exact = mode == SearchRank.exact } else { exact = capped <= exactRankLimit }
            let total =
                capped <= exactRankLimit
                ? capped
                : try db.scalar(
                    Int.self, "SELECT count(*) \(countFrom(scope)) WHERE mirror_search MATCH ? AND \(scopeSQL)",
                    [search.matchExpression] + scopeArguments) ?? 0
            var items: [TrackListItem] = []
            var next: PageCursor?
            if exact {
                var last: (Double, TrackID) = (-Double.infinity, TrackID(0))
                if let cursor, cursor.key.count == 2, case .number(let score) = cursor.key[1] { last = (score, cursor.id) }
                let (sql, arguments) = searchSQL(search, scope: scope, exact: true)
                var scores: [Double] = []
                try db.forEachRow(sql, arguments + [last.0, last.1.rawValue, limit + 1]) { row in
                    items.append(try decode(row, numeric: [], withKey: false).0)
                    scores.append(try row.double(MirrorQueryEngine.listColumnCount + 1))
                }
                if items.count > limit {
                    items.removeLast()
                    next = PageCursor(key: [.number(SearchRank.exact), .number(scores[limit - 1])], id: items[limit - 1].id)
                }
            } else {
                var tier = 0
                var after: Int64 = 0
                if let cursor, cursor.key.count == 2, case .number(let value) = cursor.key[1] {
                    tier = Int(value)
                    after = cursor.id.rawValue
                }
                var tiers: [Int] = []
                while tier < SearchRank.tierCount && items.count <= limit {
                    let (sql, arguments) = searchSQL(search, scope: scope, exact: false, tier: tier)
                    try db.forEachRow(sql, arguments + [after, limit + 1 - items.count]) { row in
                        items.append(try decode(row, numeric: [], withKey: false).0)
                        tiers.append(tier)
                    }
                    tier += 1
                    after = 0
                }
                if items.count > limit {
                    items.removeLast()
                    next = PageCursor(key: [.number(SearchRank.tiered), .number(Double(tiers[limit - 1]))], id: items[limit - 1].id)
                }
            }
            return ListPage(items: items, nextCursor: next, total: total)
        }
    }
}

extension DirectQueryEngine {
    /// Every track matching a search within `scope`, with its tier, in tier then ID order: the
    /// oracle for which tracks match (and for the order of the mirror's tiered mode).
    package func searchRows(_ search: SearchQuery, scope: SearchScope) throws -> [(tier: Int, track: Track)] {
        guard !search.isEmpty else { return [] }
        return try db.transaction(.deferred) {
            var members: Set<TrackID>?
            if let playlist = scope.playlist {
                members = Set(
                    try db.query("SELECT track_id FROM playlist_item WHERE playlist_id = ?", [playlist.rawValue]) {
                        TrackID(try $0.int64(0))
                    })
            }
            var rows: [(tier: Int, track: Track)] = []
            try db.forEachRow(TrackRow.selectWithoutTexts + TrackRow.present + " ORDER BY id") { row in
                let track = try TrackRow.decode(row)
                guard members.map({ $0.contains(track.id) }) ?? true, scope.filter.matches(track) else { return }
                let document = SearchDocument(track)
                guard document.matches(search) else { return }
                rows.append((document.tier(search), track))
            }
            rows.sort { ($0.tier, $0.track.id) < ($1.tier, $1.track.id) }
            return rows
        }
    }

    /// Pages `searchRows` in tier order; a cursor from the mirror's bm25 mode restarts the list.
    package func search(_ search: SearchQuery, scope: SearchScope, after cursor: PageCursor?, limit: Int) throws -> ListPage {
        let rows = try searchRows(search, scope: scope)
        var start = 0
        if let cursor, cursor.key.count == 2, cursor.key[0] == .number(SearchRank.tiered), case .number(let tier) = cursor.key[1] {
            start = rows.firstIndex { ($0.tier, $0.track.id) > (Int(tier), cursor.id) } ?? rows.count
        }
        let slice = rows[start..<min(rows.count, start + limit)]
        let next = slice.last.flatMap { last in
            start + slice.count < rows.count ? PageCursor(key: [.number(SearchRank.tiered), .number(Double(last.tier))], id: last.track.id) : nil
        }
        return ListPage(items: slice.map { TrackListItem($0.track, section: "#") }, nextCursor: next, total: rows.count)
    }
}
