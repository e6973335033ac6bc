import Foundation
import ShelfCore
import ShelfDatabase

/// The obviously-correct path: reads canonical rows into `Track` values, filters and sorts them in
/// Swift with `SortKey`. Used before the mirror is built and as the oracle in tests.
package struct DirectQueryEngine: QueryEngine {
    let db: Connection
    var options = SortKeyOptions()

    /// An engine reading the canonical store through `db`.
    package init(db: Connection) { self.db = db }

    package typealias Row = (key: [SortComponent], track: Track)

    /// Every matching track with its key, in list order.
    package func rows(_ query: LibraryQuery) throws -> [Row] {
        var rows: [Row] = []
        try db.forEachRow(TrackRow.selectWithoutTexts + (query.filter.mentionsMissing ? "" : TrackRow.present)) { row in
            let track = try TrackRow.decode(row)
            if query.filter.matches(track) { rows.append((SortKey.components(of: track, for: query, options: options), track)) }
        }
        rows.sort { SortKey.precedes(($0.key, $0.track.id), ($1.key, $1.track.id)) }
        return query.descending ? rows.reversed() : rows
    }

    func item(_ row: Row, _ field: SortField) -> TrackListItem {
        TrackListItem(row.track, section: SortKey.section(of: row.key, field: field))
    }

    func isAfter(_ row: Row, _ cursor: PageCursor, descending: Bool) -> Bool {
        if row.key == cursor.key && row.track.id == cursor.id { return cursor.inclusive }
        let before = SortKey.precedes((cursor.key, cursor.id), (row.key, row.track.id))
        return descending ? !before : before
    }

    package func page(_ query: LibraryQuery, after cursor: PageCursor?, limit: Int) throws -> ListPage {
        let all = try db.transaction(.deferred) { try rows(query) }
        let start = cursor.map { c in all.firstIndex { isAfter($0, c, descending: query.descending) } ?? all.count } ?? 0
        return makePage(all, from: start, limit: limit, field: query.sort)
    }

    package func page(_ query: LibraryQuery, offset: Int, limit: Int) throws -> ListPage {
        let all = try db.transaction(.deferred) { try rows(query) }
        return makePage(all, from: min(offset, all.count), limit: limit, field: query.sort)
    }

    func makePage(_ all: [Row], from start: Int, limit: Int, field: SortField) -> ListPage {
        let slice = all[start..<min(all.count, start + limit)]
        let next = slice.last.flatMap { last in
            start + slice.count < all.count ? PageCursor(key: last.key, id: last.track.id) : nil
        }
        return ListPage(items: slice.map { item($0, field) }, nextCursor: next, total: all.count)
    }

    package func playlistPage(
        _ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool, after cursor: PageCursor?, limit: Int
    ) throws -> ListPage {
        let all = try playlistRows(playlist, query, sorted: sorted)
        let start =
            cursor.map { c in
                all.firstIndex { row in
                    if row.key == c.key { return c.inclusive }
                    let before = SortKey.precedes((c.key, TrackID(0)), (row.key, TrackID(0)))
                    return sorted && query.descending ? !before : before
                } ?? all.count
            } ?? 0
        return makePage(all, from: start, limit: limit, field: sorted ? query.sort : .path)
    }

    /// A playlist's items with their keys (the chain when sorted, then the position), in order.
    func playlistRows(_ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool) throws -> [Row] {
        try db.transaction(.deferred) {
            let byID = Dictionary(try rows(query).map { ($0.track.id, $0) }, uniquingKeysWith: { first, _ in first })
            var items: [Row] = []
            try db.forEachRow("SELECT position, track_id FROM playlist_item WHERE playlist_id = ? ORDER BY position", [playlist.rawValue]) { row in
                guard let match = byID[TrackID(try row.int64(1))] else { return }
                let position = SortComponent.number(Double(try row.int64(0)))
                items.append(((sorted ? match.key : []) + [position], match.track))
            }
            // Sorted: by the chain, then the position (the ID is no tie-break: a track may repeat).
            if sorted {
                items.sort { SortKey.precedes(($0.key, TrackID(0)), ($1.key, TrackID(0))) }
                if query.descending { items.reverse() }
            }
            return items
        }
    }

    package func playlistSections(_ playlist: PlaylistID, _ query: LibraryQuery) throws -> [SectionInfo] {
        Self.sections(of: try playlistRows(playlist, query, sorted: true), field: query.sort)
    }

    package func snapshot(_ query: LibraryQuery) throws -> [TrackID] {
        try db.transaction(.deferred) { try rows(query).map(\.track.id) }
    }

    package func sections(_ query: LibraryQuery) throws -> [SectionInfo] {
        Self.sections(of: try db.transaction(.deferred, { try rows(query) }), field: query.sort)
    }

    /// Runs of rows in one section, in list order.
    static func sections(of rows: [Row], field: SortField) -> [SectionInfo] {
        var sections: [SectionInfo] = []
        for (index, row) in rows.enumerated() {
            let name = SortKey.section(of: row.key, field: field)
            if sections.last?.name == name {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(SectionInfo(name: name, firstIndex: index, count: 1))
            }
        }
        return sections
    }

    package func anchor(_ section: String, _ query: LibraryQuery) throws -> SectionAnchor? {
        let all = try db.transaction(.deferred) { try rows(query) }
        guard let index = all.firstIndex(where: { SortKey.section(of: $0.key, field: query.sort) == section }) else { return nil }
        return SectionAnchor(index: index, cursor: PageCursor(key: all[index].key, id: all[index].track.id, inclusive: true))
    }

    package func hasRows(_ query: LibraryQuery) throws -> Bool {
        var found = false
        let statement = try db.cachedStatement(TrackRow.selectWithoutTexts + (query.filter.mentionsMissing ? "" : TrackRow.present))
        defer { statement.reset() }
        while !found, try statement.step() {
            found = query.filter.matches(try TrackRow.decode(statement.currentRow))
        }
        return found
    }
}
