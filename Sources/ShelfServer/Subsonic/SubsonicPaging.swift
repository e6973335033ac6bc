import Foundation
import Shelf
import ShelfCore

/// Cursors remembered at the end of the pages clients fetched, so the next page of a sync is one
/// keyset probe that neither skips nor repeats a row while the library changes between pages.
/// Bounded: the oldest lists are forgotten first, and the album IDs positions hold (`seen`, which
/// grows with the offset) have one budget, past which a list's lowest positions go first: a
/// client paging forward keeps the position it needs next.
final class SubsonicCursors: Sendable {
    static func scoped(_ list: String) -> String {
        (LibraryScope.current.roots?.joined(separator: "\u{0}") ?? "*") + "\u{1}" + list
    }

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
        /// The album IDs every position's `seen` holds, together.
        var seenCount = 0

        mutating func remove(_ list: String, at offset: Int) {
            guard let removed = lists[list]?.removeValue(forKey: offset) else { return }
            seenCount -= removed.seen.count
        }

        mutating func remove(_ list: String) {
            seenCount -= lists[list]?.values.reduce(0) { $0 + $1.seen.count } ?? 0
            lists[list] = nil
            used[list] = nil
        }
    }

    private let state = Locked(State())
    private let maxLists = 256
    private let maxPerList = 512
    /// Album IDs held in `seen` sets, all positions together (about 3 MB). Without it the positions
    /// of one album list paged at random depths held hundreds of sets of thousands of IDs: 12 MiB
    /// after 8 minutes of `shelf-bench soak` under heaptrack, and growing (docs/benchmarks.md).
    private let maxSeen: Int

    init(maxSeen: Int = 200_000) { self.maxSeen = maxSeen }

    /// How many album IDs the remembered positions hold (for tests).
    var seenCount: Int { state.withLock { $0.seenCount } }

    /// The remembered position of `list` nearest at or before `offset`.
    /// Lists are kept per reader's scope: a position in one user's list is no position in another's.
    func nearest(_ list: String, atMost offset: Int) -> Position? {
        let list = Self.scoped(list)
        return state.withLock { state in
            // Only lists with positions are counted as used: a search asked once is no list to keep.
            guard let positions = state.lists[list] else { return nil }
            state.clock += 1
            state.used[list] = state.clock
            return positions.filter { $0.key <= offset }.max { $0.key < $1.key }?.value
        }
    }

    /// Remembers `position` of `list`.
    func store(_ list: String, _ position: Position) {
        let list = Self.scoped(list)
        state.withLock { state in
            state.clock += 1
            state.used[list] = state.clock
            state.remove(list, at: position.offset)
            state.lists[list, default: [:]][position.offset] = position
            state.seenCount += position.seen.count
            if let positions = state.lists[list], positions.count > maxPerList, let lowest = positions.keys.min() {
                state.remove(list, at: lowest)
            }
            if state.lists.count > maxLists, let oldest = state.used.min(by: { $0.value < $1.value })?.key {
                state.remove(oldest)
            }
            // Over the budget: the least recently used list's lowest positions first, never the
            // position just stored.
            while state.seenCount > maxSeen {
                var victim: (list: String, offset: Int, used: UInt64)?
                for (name, positions) in state.lists {
                    let used = state.used[name, default: 0]
                    if let victim, victim.used <= used { continue }
                    let holding = positions.filter { !$0.value.seen.isEmpty && !(name == list && $0.key == position.offset) }
                    if let lowest = holding.keys.min() { victim = (name, lowest, used) }
                }
                guard let victim else { break }
                state.remove(victim.list, at: victim.offset)
            }
        }
    }
}

extension SubsonicAPI {
    /// Rows skipped per step when a search must walk from a remembered cursor.
    static let walkStep = 5_000
    /// How far past a remembered cursor a list is walked rather than sought: a client that got a
    /// short last page and asks again after an import must continue from where it was, not from
    /// a position the import moved.
    static let walkReach = 1_000

    /// `limit` rows of a view from row `offset`: the next page a client asks for is one keyset
    /// probe from the cursor remembered at the end of its last; any other offset is the engine's
    /// seek, which costs the same at any depth.
    func groupRows(_ query: GroupQuery, offset: Int, limit: Int) async throws -> [GroupItem] {
        guard limit > 0 else { return [] }
        let list = "g|\(query.kind.rawValue)|\(query.artist?.rawValue ?? 0)|\(query.descending)|\(query.byArtist)"
        // Pictures are only flagged on these rows (`hasPicture`), so their tracks are not read.
        let page: GroupPage
        if let known = cursors.nearest(list, atMost: offset), offset - known.offset <= Self.walkReach {
            var cursor = known.cursor
            if offset > known.offset {
                let skipped = try await library.groups(query, after: cursor, limit: offset - known.offset, artwork: false)
                guard skipped.items.count == offset - known.offset, let next = skipped.nextCursor else { return [] }
                cursor = next
            }
            page = try await library.groups(query, after: cursor, limit: limit, artwork: false)
        } else if offset == 0 {
            page = try await library.groups(query, after: nil, limit: limit, artwork: false)
        } else {
            page = try await library.groups(query, offset: offset, limit: limit, artwork: false)
        }
        remember(list, offset: offset, count: page.items.count, next: page.nextCursor)
        return page.items
    }

    /// Remembers where a page ended. A list's last page has no cursor to remember: a client
    /// asking past it later walks from where that page started.
    private func remember(_ list: String, offset: Int, count: Int, next: PageCursor?) {
        guard count > 0, let next else { return }
        cursors.store(list, .init(offset: offset + count, cursor: next))
    }

    /// `limit` track IDs of a list (or of a search's hits, best first) from row `offset`. Lists
    /// seek like views; a search's order is its ranking, which has no position to seek by, so a
    /// first visit to a deep offset walks from the nearest remembered cursor.
    func trackRows(_ query: LibraryQuery, search: String? = nil, offset: Int, limit: Int) async throws -> [TrackID] {
        guard limit > 0 else { return [] }
        let list = "t|\(query)|\(search ?? "")"
        let library = context.library
        @Sendable func page(after cursor: PageCursor?, limit: Int) async throws -> ListPage {
            if let search { return try await library.search(search, after: cursor, limit: limit) }
            return try await library.list(query, after: cursor, limit: limit)
        }
        var position = cursors.nearest(list, atMost: offset)
        let rows: ListPage
        if search == nil, offset > 0, offset - (position?.offset ?? 0) > Self.walkReach {
            rows = try await library.list(query, offset: offset, limit: limit)
        } else {
            while (position?.offset ?? 0) < offset {
                let step = min(offset - (position?.offset ?? 0), Self.walkStep)
                let skipped = try await page(after: position?.cursor, limit: step)
                guard skipped.items.count == step, let next = skipped.nextCursor else { return [] }
                position = SubsonicCursors.Position(offset: (position?.offset ?? 0) + step, cursor: next)
            }
            rows = try await page(after: position?.cursor, limit: limit)
        }
        remember(list, offset: offset, count: rows.items.count, next: rows.nextCursor)
        return rows.items.map(\.id)
    }

    /// The album ID of a list row (the same keys as the album view).
    static func albumID(_ item: TrackListItem) -> GroupID? {
        var track = Track(path: "", artist: item.artist, album: item.album, albumArtist: item.albumArtist, compilation: item.compilation)
        track.details.musicBrainz.releaseID = item.releaseID
        // The owner's ID goes where the owner's name is: the album artist, else the artist.
        if let owner = item.ownerArtistID {
            if SortKey.isBlank(item.albumArtist) {
                track.details.musicBrainz.artistIDs = [owner]
            } else {
                track.details.musicBrainz.albumArtistIDs = [owner]
            }
        }
        return Library.groupIDs(of: track).album
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
