import Foundation
import Shelf
import ShelfCore

/// Cursors remembered at the end of the pages clients fetched, so an `offset` is a keyset seek
/// from the nearest remembered position (the next page of a sync is one probe), never SQL
/// `OFFSET` over the whole list. Bounded: the oldest lists are forgotten first.
final class SubsonicCursors: Sendable {
    /// A remembered position: the rows before it, where the list continues, and (for album lists
    /// made from track lists) the albums already seen.
    struct Position: Sendable {
        var offset: Int
        var cursor: PageCursor
        var seen: Set<GroupID> = []
        var pending: [GroupID] = []
    }

    private struct State {
        var lists: [String: [Int: Position]] = [:]
        var used: [String: UInt64] = [:]
        var clock: UInt64 = 0
    }

    private let state = Locked(State())
    private let maxLists = 256
    private let maxPerList = 512

    /// The remembered position of `list` nearest at or before `offset`.
    func nearest(_ list: String, atMost offset: Int) -> Position? {
        state.withLock { state in
            state.clock += 1
            state.used[list] = state.clock
            return state.lists[list]?.filter { $0.key <= offset }.max { $0.key < $1.key }?.value
        }
    }

    /// Remembers `position` of `list`.
    func store(_ list: String, _ position: Position) {
        state.withLock { state in
            state.clock += 1
            state.used[list] = state.clock
            var positions = state.lists[list] ?? [:]
            positions[position.offset] = position
            if positions.count > maxPerList, let lowest = positions.keys.min() { positions[lowest] = nil }
            state.lists[list] = positions
            if state.lists.count > maxLists, let oldest = state.used.min(by: { $0.value < $1.value })?.key {
                state.lists[oldest] = nil
                state.used[oldest] = nil
            }
        }
    }
}

extension SubsonicAPI {
    /// Rows skipped per step when a seek must walk from a remembered cursor.
    static let walkStep = 5_000

    /// `limit` rows of a view from row `offset`, by keyset pages.
    func groupRows(_ query: GroupQuery, offset: Int, limit: Int) async throws -> [GroupItem] {
        let list = "g|\(query.kind.rawValue)|\(query.artist?.rawValue ?? 0)|\(query.descending)"
        let library = context.library
        var position = cursors.nearest(list, atMost: offset)
        while (position?.offset ?? 0) < offset {
            let step = min(offset - (position?.offset ?? 0), Self.walkStep)
            // Skipped rows need no pictures: the artwork lookup would read a track per row.
            let page = try await library.groups(query, after: position?.cursor, limit: step, artwork: false)
            guard page.items.count == step, let next = page.nextCursor else { return [] }
            position = SubsonicCursors.Position(offset: (position?.offset ?? 0) + step, cursor: next)
        }
        guard limit > 0 else { return [] }
        // Pictures are only flagged on these rows (`hasPicture`), so their tracks are not read.
        let page = try await library.groups(query, after: position?.cursor, limit: limit, artwork: false)
        if let next = page.nextCursor { cursors.store(list, .init(offset: offset + page.items.count, cursor: next)) }
        return page.items
    }

    /// `limit` track IDs of a list (or of a search's hits, best first) from row `offset`.
    func trackRows(_ query: LibraryQuery, search: String? = nil, offset: Int, limit: Int) async throws -> [TrackID] {
        let list = "t|\(query)|\(search ?? "")"
        let library = context.library
        @Sendable func page(after cursor: PageCursor?, limit: Int) async throws -> ListPage {
            if let search { return try await library.search(search, after: cursor, limit: limit) }
            return try await library.list(query, after: cursor, limit: limit)
        }
        var position = cursors.nearest(list, atMost: offset)
        while (position?.offset ?? 0) < offset {
            let step = min(offset - (position?.offset ?? 0), Self.walkStep)
            let skipped = try await page(after: position?.cursor, limit: step)
            guard skipped.items.count == step, let next = skipped.nextCursor else { return [] }
            position = SubsonicCursors.Position(offset: (position?.offset ?? 0) + step, cursor: next)
        }
        guard limit > 0 else { return [] }
        let rows = try await page(after: position?.cursor, limit: limit)
        if let next = rows.nextCursor { cursors.store(list, .init(offset: offset + rows.items.count, cursor: next)) }
        return rows.items.map(\.id)
    }

    /// The album ID of a list row (the same keys as the album view).
    static func albumID(_ item: TrackListItem) -> GroupID? {
        Library.groupIDs(of: Track(path: "", artist: item.artist, album: item.album, albumArtist: item.albumArtist, compilation: item.compilation)).album
    }

    /// `limit` albums from album `offset` of the albums met walking a track list in its order
    /// (newest, frequent, recent, highest, byYear, byGenre): each album where its first track is.
    /// A remembered position holds the albums seen before it and those of its page not yet sent.
    func albumsOfTracks(_ query: LibraryQuery, offset: Int, limit: Int) async throws -> [GroupID] {
        let list = "a|\(query)"
        let library = context.library
        let resume = cursors.nearest(list, atMost: offset)
        // `ordered` holds albums from index `base` on, in list order.
        var base = resume?.offset ?? 0
        var ordered = resume?.pending ?? []
        var seen = resume?.seen ?? []
        var cursor = resume?.cursor
        var more = resume == nil || cursor != nil
        while more && base + ordered.count < offset + limit {
            let page = try await library.list(query, after: cursor, limit: 1_000)
            for item in page.items {
                if let album = Self.albumID(item), seen.insert(album).inserted { ordered.append(album) }
            }
            cursor = page.nextCursor
            more = page.nextCursor != nil
            // Albums wholly before the offset need not be held.
            let drop = min(ordered.count, max(0, offset - base))
            ordered.removeFirst(drop)
            base += drop
        }
        let skip = max(0, offset - base)
        let found = Array(ordered.dropFirst(skip).prefix(limit))
        if let cursor, found.count == limit {
            let end = offset + limit
            let pending = Array(ordered.dropFirst(end - base))
            cursors.store(list, .init(offset: end, cursor: cursor, seen: seen, pending: pending))
        }
        return found
    }
}
