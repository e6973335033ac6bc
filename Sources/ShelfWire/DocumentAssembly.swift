import Shelf
import ShelfCore

extension ListedTrack {
    /// A list page's rows as whole tracks with their sections (a track listed twice is read once).
    public static func rows(of page: ListPage, _ library: Library) async throws -> [ListedTrack] {
        let tracks = try await library.tracks(ids: page.items.map(\.id)).tracks
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return page.items.compactMap { item in byID[item.id].map { ListedTrack(track: $0, section: item.section) } }
    }
}

/// Builders for the documents both the command line and the server send.
public enum Documents {
    /// A page of tracks: `{"items":[…whole tracks with "section"…],"nextCursor":…,"total":N}`.
    public static func tracks(_ page: ListPage, _ library: Library) async throws -> PageResult<ListedTrack> {
        PageResult(items: try await ListedTrack.rows(of: page, library), nextCursor: page.nextCursor?.description, total: page.total)
    }

    /// A page of a view: `{"items":[{"id":…,"kind":…,"name":…,…}],"nextCursor":…,"total":N}`.
    public static func groups(_ page: GroupPage) -> PageResult<GroupItem> {
        PageResult(items: page.items, nextCursor: page.nextCursor?.description, total: page.total)
    }

    /// Every playlist and folder with its item count.
    public static func playlists(_ library: Library) async throws -> PlaylistsDocument {
        var listed: [PlaylistSummary] = []
        for playlist in try await library.playlists() {
            let count = playlist.kind == .regular ? try await library.playlistItems(playlist.id).count : 0
            listed.append(PlaylistSummary(playlist, itemCount: count))
        }
        return PlaylistsDocument(playlists: listed)
    }

    /// One playlist with every item (a smart playlist's evaluated now).
    public static func playlist(_ id: PlaylistID, _ library: Library) async throws -> PlaylistDocument {
        guard let playlist = try await library.playlists().first(where: { $0.id == id }) else { throw LibraryError.playlistNotFound(id) }
        let ids = playlist.kind == .smart ? try await library.smartPlaylistTracks(id) : try await library.playlistItems(id)
        let byID = Dictionary(try await library.tracks(ids: ids).tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let items = ids.enumerated().compactMap { index, track in byID[track].map { PlaylistItem(position: index + 1, track: $0) } }
        return PlaylistDocument(playlist: PlaylistSummary(playlist, itemCount: ids.count), items: items)
    }

    /// A playlist's item count after an edit: `{"id":…,"itemCount":N}`.
    public static func playlistCount(_ id: PlaylistID, _ library: Library) async throws -> PlaylistCountDocument {
        PlaylistCountDocument(id: id.rawValue, itemCount: Int64(try await library.playlistItems(id).count))
    }

    /// The first `limit` tracks of a smart playlist, evaluated now, with every ID.
    public static func smartPlaylist(_ id: PlaylistID, limit: Int, _ library: Library) async throws -> SmartPlaylistDocument {
        let ids = try await library.smartPlaylistTracks(id)
        let shown = Array(ids.prefix(limit))
        let fetched = Dictionary(try await library.tracks(ids: shown).tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let page = ListPage(items: shown.compactMap { fetched[$0].map { TrackListItem($0, section: "#") } }, nextCursor: nil, total: ids.count)
        return SmartPlaylistDocument(id: id, trackCount: ids.count, trackIDs: ids, items: try await ListedTrack.rows(of: page, library))
    }

    /// What changed since `since`, per transaction (or one net `summary`).
    /// `viewer`, when given, sees only their own play queue among the changes.
    public static func changes(
        since: ChangeToken, summary: Bool, scope: Set<PlaylistID>?, limit: Int?, viewer: UserID? = nil, _ library: Library
    ) async throws -> ChangesDocument {
        if summary {
            let net = try await library.changeSummary(since: since, scope: scope).seen(by: viewer)
            return ChangesDocument(changes: [net], token: net.token, hasMore: false)
        }
        let feed = try await library.changes(since: since, scope: scope, limit: limit)
        return ChangesDocument(changes: feed.changes.map { $0.seen(by: viewer) }, token: feed.token, hasMore: feed.hasMore)
    }
}
