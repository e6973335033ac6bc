import Foundation
import Shelf
import ShelfCore

/// The one encoder behind `shelf --json` and every `/api/` answer, so the two cannot drift:
/// camelCase keys as `Codable` writes them, keys sorted for stable output, ISO 8601 dates.
public enum Wire {
    /// A fresh encoder with Shelf's settings (JSONEncoder is not safe to share across threads).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// `value` as one JSON document: through its own `FastJSONEncodable` writer when it has one
    /// (the same bytes, many times faster), else through `encoder()`.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        if let fast = value as? any FastJSONEncodable, let data = fastEncode(fast) { return data }
        return try slowEncode(value)
    }

    /// `value` through JSONEncoder alone, as `encode` did before the fast writers (tests compare both).
    public static func slowEncode<T: Encodable>(_ value: T) throws -> Data { try encoder().encode(value) }

    /// `value` through its own writer; nil when it met something only JSONEncoder can report (a NaN).
    public static func fastEncode(_ value: some FastJSONEncodable) -> Data? {
        var writer = JSONWriter()
        value.writeJSON(to: &writer)
        return writer.needsFallback ? nil : Data(writer.bytes)
    }
}

/// A bad parameter value found while reading a request (a flag or a query parameter): the
/// message names the value and what was expected. The command line makes it a usage error, the
/// server a 400.
public struct WireInputError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the value.
    public let message: String
    /// An error with its message.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// `{"error":{"code":…,"message":…}}`: how every failure is printed and answered.
public struct ErrorDocument: Codable, Sendable {
    /// The error itself.
    public struct Body: Codable, Sendable {
        /// A stable machine-readable code (`usage`, `trackNotFound`, `tokenExpired`, …).
        public let code: String
        /// A sentence for people, naming the value at fault.
        public let message: String
    }
    /// The error.
    public let error: Body

    /// A document for `code` and `message`.
    public init(code: String, message: String) { error = Body(code: code, message: message) }
}

/// `{"items":[…],"nextCursor":"…"|null,"total":N}`: the page shape of tracks, search and the views.
public struct PageResult<Item: Encodable>: Encodable {
    /// The rows of this page.
    public let items: [Item]
    /// The cursor of the next page; null on the last.
    public let nextCursor: String?
    /// Rows in the whole list.
    public let total: Int

    /// A page from its parts.
    public init(items: [Item], nextCursor: String?, total: Int) {
        self.items = items
        self.nextCursor = nextCursor
        self.total = total
    }

    enum Keys: String, CodingKey { case items, nextCursor, total }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)  // null at the end, never absent
        try container.encode(total, forKey: .total)
    }
}

/// A track as a list prints it: every `Track` field plus the row's `section`.
public struct ListedTrack: Encodable, Sendable {
    /// The whole track.
    public let track: Track
    /// The A–Z / kana / # section of the row in its list.
    public let section: String

    /// A row from its parts.
    public init(track: Track, section: String) {
        self.track = track
        self.section = section
    }

    enum Keys: String, CodingKey { case section }

    /// A list page's rows as whole tracks with their sections (a track listed twice is read once).
    public static func rows(of page: ListPage, _ library: Library) async throws -> [ListedTrack] {
        let tracks = try await library.tracks(ids: page.items.map(\.id)).tracks
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return page.items.compactMap { item in byID[item.id].map { ListedTrack(track: $0, section: item.section) } }
    }

    public func encode(to encoder: any Encoder) throws {
        try track.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(section, forKey: .section)
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

/// `{"sections":[{"name":"A","firstIndex":0,"count":120},…]}`.
public struct SectionsDocument: Encodable, Sendable {
    /// The sections in list order.
    public let sections: [SectionInfo]
    /// A document of `sections`.
    public init(sections: [SectionInfo]) { self.sections = sections }
}

/// `{"ids":[…]}`: a whole list's track IDs in order.
public struct SnapshotDocument: Encodable, Sendable {
    /// The IDs in order.
    public let ids: [TrackID]
    /// A document of `ids`.
    public init(ids: [TrackID]) { self.ids = ids }
}

/// `{"deleted":[…]}`: the tracks a delete removed.
public struct DeletedTracksDocument: Encodable, Sendable {
    /// The removed track IDs.
    public let deleted: [TrackID]
    /// A document of `deleted`.
    public init(deleted: [TrackID]) { self.deleted = deleted }
}

/// `{"token":"shelf1.…"}`.
public struct TokenDocument: Encodable, Sendable {
    /// The current change token.
    public let token: ChangeToken
    /// A document of `token`.
    public init(token: ChangeToken) { self.token = token }
}

/// `{"changes":[…],"token":…,"hasMore":false}`: a page of the change feed.
public struct ChangesDocument: Encodable, Sendable {
    /// One entry per transaction (or one net summary).
    public let changes: [PersistentChange]
    /// The token to ask from next.
    public let token: ChangeToken
    /// Whether more changes wait after `token`.
    public let hasMore: Bool
    /// A document from its parts.
    public init(changes: [PersistentChange], token: ChangeToken, hasMore: Bool) {
        self.changes = changes
        self.token = token
        self.hasMore = hasMore
    }
}

/// `{"updated":[…],"skipped":[…],"failed":[…]}`: the report of an edit.
public struct EditDocument: Encodable, Sendable {
    /// Tracks whose files and rows were written.
    public let updated: [TrackID]
    /// Tracks left alone, with why.
    public let skipped: [EditResult.Skipped]
    /// Tracks whose file could not be written (it is unchanged).
    public let failed: [EditResult.Failed]
    /// The document of an edit's result.
    public init(_ result: EditResult) {
        updated = result.updated
        skipped = result.skipped
        failed = result.failed
    }
}

/// `{"exported":[…],"skipped":[…],"failed":[…]}`: the report of an export.
public struct ExportDocument: Encodable, Sendable {
    /// Files written and registered.
    public let exported: [ExportResult.Exported]
    /// Tracks not exported, with why.
    public let skipped: [EditResult.Skipped]
    /// Tracks whose export failed.
    public let failed: [EditResult.Failed]
    /// The document of an export's result.
    public init(_ result: ExportResult) {
        exported = result.exported
        skipped = result.skipped
        failed = result.failed
    }
}

/// A playlist as lists print it: `{"id":…,"name":…,"kind":"regular"|"folder"|"smart","parentID":…,"itemCount":N}`.
public struct PlaylistSummary: Encodable, Sendable {
    /// The playlist's ID.
    public let id: PlaylistID
    /// Its name.
    public let name: String
    /// `regular`, `folder` or `smart`.
    public let kind: String
    /// The folder holding it.
    public let parentID: PlaylistID?
    /// Its items (0 for folders and smart playlists in lists).
    public let itemCount: Int

    /// The summary of `playlist` with `itemCount` items.
    public init(_ playlist: Playlist, itemCount: Int) {
        id = playlist.id
        name = playlist.name
        kind = Self.kindName(playlist.kind)
        parentID = playlist.parentID
        self.itemCount = itemCount
    }

    /// The JSON name of a playlist kind.
    public static func kindName(_ kind: Playlist.Kind) -> String {
        switch kind {
        case .regular: "regular"
        case .folder: "folder"
        case .smart: "smart"
        }
    }
}

/// `{"playlists":[…]}`.
public struct PlaylistsDocument: Encodable, Sendable {
    /// Every playlist and folder.
    public let playlists: [PlaylistSummary]
    /// A document of `playlists`.
    public init(playlists: [PlaylistSummary]) { self.playlists = playlists }
}

/// One playlist item: its position (from 1) and the whole track.
public struct PlaylistItem: Encodable, Sendable {
    /// Position in the playlist, counting from 1.
    public let position: Int
    /// The track there.
    public let track: Track
}

/// `{"playlist":{…},"items":[{"position":1,"track":{…}},…]}`.
public struct PlaylistDocument: Encodable, Sendable {
    /// The playlist.
    public let playlist: PlaylistSummary
    /// Its items in order.
    public let items: [PlaylistItem]
}

/// `{"id":…,"itemCount":N}`: a playlist after an edit.
public struct PlaylistCountDocument: Encodable, Sendable {
    /// The playlist's ID.
    public let id: Int64
    /// Its item count now.
    public let itemCount: Int64
}

/// `{"id":…,"name":…,"rules":{…}}`: a smart playlist just created.
public struct SmartCreatedDocument: Encodable, Sendable {
    /// The new playlist's ID.
    public let id: PlaylistID
    /// Its name.
    public let name: String
    /// Its rules.
    public let rules: SmartRules
    /// A document from its parts.
    public init(id: PlaylistID, name: String, rules: SmartRules) {
        self.id = id
        self.name = name
        self.rules = rules
    }
}

/// `{"id":…,"trackCount":N,"trackIDs":[…],"items":[…]}`: a smart playlist evaluated now.
public struct SmartPlaylistDocument: Encodable, Sendable {
    /// The playlist's ID.
    public let id: PlaylistID
    /// How many tracks it holds now.
    public let trackCount: Int
    /// Every track ID in order.
    public let trackIDs: [TrackID]
    /// The first tracks, whole.
    public let items: [ListedTrack]
}
