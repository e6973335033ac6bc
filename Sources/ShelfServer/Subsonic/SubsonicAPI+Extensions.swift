import Foundation
import Shelf
import ShelfCore

/// Shelf's own OpenSubsonic extensions (documented in `docs/`): `shelfSync`, what changed since a
/// token with deletions, and `shelfAlphabetIndex`, the sections of a list with counts and offsets.
extension SubsonicAPI {
    /// The error code of a token that cannot be answered from (too old, compacted, another
    /// library's, or from the future): the client resyncs in full and starts from the new token.
    static let resyncCode = 80

    /// getLibraryChanges (`shelfSync`): without `token`, the current token (sync in full, then
    /// ask from it); with one, the songs, albums, artists and playlists inserted, updated and
    /// deleted since, netted, up to `limit` write transactions, the next token and `hasMore`.
    func libraryChanges(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let limit = try p.int("limit", default: 200, in: 1...1_000) ?? 200
        guard let text = p.value("token") else {
            let current = try await library.currentToken()
            return .body { w in
                w.open("libraryChanges")
                w.attribute("token", current.description)
                w.attribute("hasMore", false)
                w.close()
            }
        }
        guard let token = ChangeToken(text) else { throw SubsonicError.invalid("token", text, "a token from getLibraryChanges") }
        // Albums and artists are known from schema 8 on: an older token cannot learn their deletions.
        if token.transaction < (try await library.groupLogStart()) {
            throw SubsonicError(Self.resyncCode, "the token is from before this library recorded album changes; sync in full from a new token")
        }
        let feed: ChangeFeed
        do {
            feed = try await library.changes(since: token, limit: limit)
        } catch let error as LibraryError where error.kind == .expired {
            throw SubsonicError(Self.resyncCode, "the token can no longer be answered (\(error.description)); sync in full from a new token")
        }
        // Net over the transactions answered: inserted then deleted is nothing, inserted then
        // updated is inserted, anything then deleted is deleted.
        func net(_ type: ObjectType) -> (inserted: [Int64], updated: [Int64], deleted: [Int64]) {
            var state: [Int64: ChangeOperation] = [:]
            var order: [Int64] = []
            func id(_ key: ObjectKey) -> Int64? {
                switch key {
                case .track(let id): id.rawValue
                case .playlist(let id): id.rawValue
                case .artwork, .playQueue: nil
                }
            }
            func add(_ key: ObjectKey, _ op: ChangeOperation) {
                guard let id = id(key) else { return }
                guard let old = state[id] else {
                    state[id] = op
                    order.append(id)
                    return
                }
                switch (old, op) {
                case (.insert, .delete): state[id] = nil
                case (.insert, _): break
                case (_, .delete): state[id] = .delete
                case (.delete, .insert): state[id] = .update
                default: state[id] = op
                }
            }
            for change in feed.changes {
                let details = change.details(for: type)
                for key in details.inserted { add(key, .insert) }
                for updated in details.updated { add(updated.id, .update) }
                for key in details.deleted { add(key, .delete) }
            }
            let ids = order.filter { state[$0] != nil }
            return (ids.filter { state[$0] == .insert }, ids.filter { state[$0] == .update }, ids.filter { state[$0] == .delete })
        }
        let songs = net(.track)
        var playlists = net(.playlist)
        // Another user's private playlists are not this user's business, deleted ones excepted
        // (an ID the client never had is dropped by it).
        var visible: [Int64] = []
        for id in playlists.inserted + playlists.updated {
            if let found = try await library.visiblePlaylist(PlaylistID(id), for: user), found.playlist.kind != .folder { visible.append(id) }
        }
        // One made private or given away is gone for this user: deleted, so the copy drops it.
        playlists.deleted += playlists.updated.filter { !visible.contains($0) }
        playlists.inserted = playlists.inserted.filter(visible.contains)
        playlists.updated = playlists.updated.filter(visible.contains)
        let since = token.transaction == 0 ? nil : try await library.commitDate(ofTransaction: token.transaction)
        func groups(_ kind: GroupKind) async throws -> GroupChanges {
            let touched = try await library.touchedGroups(kind: kind, after: token.transaction, through: feed.token.transaction)
            let existing = Dictionary(try await library.groups(ids: touched, kind: kind).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            var changes = GroupChanges()
            for id in touched {
                guard let item = existing[id] else {
                    changes.deleted.append(id)
                    continue
                }
                if let since, let created = item.created, created < since { changes.updated.append(id) } else { changes.inserted.append(id) }
            }
            return changes
        }
        let albums = try await groups(.album)
        let artists = try await groups(.albumArtist)
        let next = feed.token.description
        let more = feed.hasMore
        return .body { [playlists] w in
            func ids(_ name: String, _ list: [String]) {
                w.openList(name)
                for id in list {
                    w.item()
                    w.attribute("id", id)
                    w.close()
                }
                w.closeList()
            }
            func section(_ name: String, _ inserted: [String], _ updated: [String], _ deleted: [String]) {
                w.open(name)
                ids("inserted", inserted)
                ids("updated", updated)
                ids("deleted", deleted)
                w.close()
            }
            w.open("libraryChanges")
            w.attribute("token", next)
            w.attribute("hasMore", more)
            section("songs", songs.inserted.map { "tr-\($0)" }, songs.updated.map { "tr-\($0)" }, songs.deleted.map { "tr-\($0)" })
            section(
                "albums", albums.inserted.map { "al-\($0.rawValue)" }, albums.updated.map { "al-\($0.rawValue)" }, albums.deleted.map { "al-\($0.rawValue)" })
            section(
                "artists", artists.inserted.map { "ar-\($0.rawValue)" }, artists.updated.map { "ar-\($0.rawValue)" },
                artists.deleted.map { "ar-\($0.rawValue)" })
            section("playlists", playlists.inserted.map { "pl-\($0)" }, playlists.updated.map { "pl-\($0)" }, playlists.deleted.map { "pl-\($0)" })
            w.close()
        }
    }

    /// getAlphabetIndex (`shelfAlphabetIndex`): the sections (A–Z, the kana rows, `#`) of one
    /// list with the count and the offset of each section's first item, the offsets of the same
    /// list's own paging: `list=albums` (getAlbumList2 `alphabeticalByName`), `list=artists`
    /// (search3's artists, `artistOffset`), `list=songs` with `sort` (search3's songs,
    /// `songOffset`, for `albumArtist`; the native `/api/tracks` for the other fields).
    func alphabetIndex(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let p = call.parameters
        let list = try p.required("list")
        let sections: [SectionInfo]
        var sortName = ""
        switch list {
        case "albums":
            let type = p.value("type") ?? "alphabeticalByName"
            switch type {
            case "alphabeticalByName": sections = try await library.groupSections(GroupQuery(kind: .album))
            case "alphabeticalByArtist": sections = try await library.groupSections(GroupQuery(kind: .album, byArtist: true))
            case "byGenre": sections = try await albumSectionsByArtist(.text(.genre, .equals(try p.required("genre"))))
            default:
                throw SubsonicError.invalid(
                    "type", type,
                    "alphabeticalByName, alphabeticalByArtist or byGenre (the other album lists are in order of time, plays, rating or year, so they have no alphabet)"
                )
            }
        case "artists":
            sections = try await library.groupSections(GroupQuery(kind: .albumArtist))
        case "songs":
            sortName = p.value("sort") ?? "albumArtist"
            let fields: [String: SortField] = [
                "title": .title, "artist": .artist, "album": .album, "albumArtist": .albumArtist, "composer": .composer, "genre": .genre,
            ]
            guard let field = fields[sortName] else { throw SubsonicError.invalid("sort", sortName, "title, artist, album, albumArtist, composer or genre") }
            sections = try await library.sections(LibraryQuery(sort: field))
        default:
            throw SubsonicError.invalid("list", list, "albums, artists or songs")
        }
        let total = sections.reduce(0) { $0 + $1.count }
        return .body { [sortName] w in
            w.open("alphabetIndex")
            w.attribute("list", list)
            if !sortName.isEmpty { w.attribute("sort", sortName) }
            w.attribute("total", total)
            w.openList("section")
            for section in sections {
                w.item()
                w.attribute("name", section.name)
                w.attribute("count", section.count)
                w.attribute("offset", section.firstIndex)
                w.close()
            }
            w.closeList()
            w.close()
        }
    }

    /// The sections of an album list that walks tracks by album artist (alphabeticalByArtist, and
    /// byGenre with its genre as `filter`): each album, where its first track stands, counts in the
    /// section of that track's album artist, and the offsets are the list's own (the same walk as
    /// `albumsOfTracks`). One pass over the list's tracks, kept per library state.
    func albumSectionsByArtist(_ filter: Filter) async throws -> [SectionInfo] {
        let query = LibraryQuery(sort: .albumArtist, filter: filter)
        let key = "\(LibraryScope.current.roots ?? ["*"])\(query)"
        let token = try await library.currentToken()
        if let hit = albumIndexCache.withLock({ $0[key] }), hit.token == token { return hit.sections }
        let trackSections = try await library.sections(query)
        var sections: [SectionInfo] = []
        var seen = Set<GroupID>()
        var trackIndex = 0
        var albumIndex = 0
        var current = 0
        var cursor: PageCursor?
        repeat {
            let page = try await library.list(query, after: cursor, limit: 5_000)
            for item in page.items {
                while current + 1 < trackSections.count, trackIndex >= trackSections[current + 1].firstIndex { current += 1 }
                if let album = Self.albumID(item), seen.insert(album).inserted, current < trackSections.count {
                    let name = trackSections[current].name
                    if sections.last?.name != name { sections.append(SectionInfo(name: name, firstIndex: albumIndex, count: 0)) }
                    sections[sections.count - 1].count += 1
                    albumIndex += 1
                }
                trackIndex += 1
            }
            cursor = page.nextCursor
        } while cursor != nil
        albumIndexCache.withLock { cache in
            if cache.count >= 16 { cache.removeAll() }
            cache[key] = (token, sections)
        }
        return sections
    }
}
