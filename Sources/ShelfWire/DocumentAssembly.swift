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

/// A folder as the command line and `/api/folders` show it.
public struct FolderEntry: Encodable, Sendable {
    public let id: FolderID
    public let name: String
    @NullWhenNil public var parent: FolderID?
    @NullWhenNil public var artworkId: ArtworkID?
    /// Its path under its library's root ("" for the root).
    public let path: String
    /// The library whose root holds it.
    public let library: Int

    /// The entry of `folder`.
    public init(_ folder: Folder) {
        id = folder.id
        name = folder.name
        parent = folder.parent
        artworkId = folder.artworkID
        path = folder.relativePath
        library = folder.library
    }
}

/// `/api/folders/{id}` and `shelf folders PATH --json`: `{"folder":{…},"folders":[…],"tracks":[…]}`.
public struct FolderDocument: Encodable, Sendable {
    public let folder: FolderEntry
    public let folders: [FolderEntry]
    /// Whole tracks, in file-name order.
    public let tracks: [ListedTrack]

    /// A document from its parts.
    public init(folder: FolderEntry, folders: [FolderEntry], tracks: [ListedTrack]) {
        self.folder = folder
        self.folders = folders
        self.tracks = tracks
    }
}

/// `/api/folders` and `shelf folders --json`: the roots of every library the reader sees.
public struct FoldersDocument: Encodable, Sendable {
    public let folders: [FolderEntry]

    /// A document of these folders.
    public init(folders: [FolderEntry]) { self.folders = folders }
}

extension Documents {
    /// One folder opened, its tracks read whole.
    public static func folder(_ contents: FolderContents, _ library: Library) async throws -> FolderDocument {
        let tracks = try await library.tracks(ids: contents.tracks).tracks
        return FolderDocument(
            folder: FolderEntry(contents.folder), folders: contents.folders.map(FolderEntry.init),
            tracks: tracks.map { ListedTrack(track: $0, section: "#") })
    }
}
