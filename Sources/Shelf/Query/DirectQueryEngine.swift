import Foundation
import ShelfCore
import ShelfDatabase

/// The obviously-correct query path: reads canonical rows into `Track` values and sorts them in
/// Swift with `SortKey`. Used before the mirror exists and as the oracle the mirror is tested against.
struct DirectQueryEngine {
    let db: Connection

    /// Every track ID in `query`'s order.
    func orderedIDs(_ query: LibraryQuery) throws -> [TrackID] {
        var keyed: [(key: [SortComponent], id: TrackID)] = []
        // Lyrics and comments never affect order, so they are not read: a large library's lyrics
        // would otherwise dominate the memory of a sort.
        let columns = TrackRow.columns.map { $0 == "lyrics" || $0 == "comment" ? "NULL" : $0 }.joined(separator: ", ")
        try db.forEachRow("SELECT \(columns) FROM track") { row in
            let track = try TrackRow.decode(row)
            keyed.append((SortKey.components(of: track, for: query), track.id))
        }
        keyed.sort { SortKey.precedes($0, $1) }
        let ids = keyed.map(\.id)
        return query.descending ? ids.reversed() : ids
    }

    /// One page by offset, with the total.
    func page(_ query: LibraryQuery, offset: Int, limit: Int) throws -> TrackPage {
        try db.transaction(.deferred) {
            let ids = try orderedIDs(query)
            let slice = ids.dropFirst(offset).prefix(limit)
            let items = try slice.map { id in
                guard let track = try db.queryOne(TrackRow.select + " WHERE id = ?", [id.rawValue], TrackRow.decode) else {
                    throw LibraryError.trackNotFound(id)
                }
                return track
            }
            return TrackPage(items: items, total: ids.count)
        }
    }
}
