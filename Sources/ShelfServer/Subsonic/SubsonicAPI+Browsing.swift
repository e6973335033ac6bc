import Foundation
import Shelf
import ShelfCore

/// Browsing: music folders, the artist index, folder-style directories, genres, artists, albums,
/// songs, and the info and similarity endpoints Shelf answers from its tags alone.
extension SubsonicAPI {
    // MARK: Music folders

    /// getMusicFolders: the libraries the user may see, by their IDs.
    func getMusicFolders() async throws -> SubsonicReply {
        let scope = LibraryScope.current
        let visible = try await library.libraries().filter { scope.sees(library: $0.id) }
        return .container("musicFolders", "musicFolder", visible.map { SubsonicMusicFolder(id: $0.id, name: $0.name) })
    }

    /// What a call by `user` may read: the user's libraries, narrowed to the `musicFolderId`
    /// ones when the call names any (repeated for several). A library the user may not see is
    /// error 70, exactly as one that does not exist, so that IDs cannot be probed.
    /// The web page's library switcher sends its choice as `page` (the `X-Shelf-Library` header)
    /// instead, when the call names no folder.
    func scope(of user: User?, _ parameters: SubsonicParameters, page: String? = nil) async throws -> LibraryScope {
        guard let user else { return .all }
        var texts = parameters.values("musicFolderId")
        if texts.isEmpty, let page, !page.isEmpty, page != "all" { texts = [page] }
        return try await library.scope(try await library.scope(for: user), limitedTo: texts)
    }

    // MARK: Artists, albums, songs

    /// The articles the engine's collation skips, as getArtists/getIndexes name them.
    static var ignoredArticles: String { SortKeyOptions.english.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") }

    /// getArtist: the artist and its albums. An artist who is only ever credited on tracks (never
    /// an album artist) is answered too, with the albums it appears on.
    func getArtist(_ call: SubsonicCall) async throws -> SubsonicReply {
        guard case .artist(let id) = try call.parameters.id() else { throw SubsonicError.notFound("artist '\(call.parameters.value("id") ?? "")'") }
        let item: GroupItem
        let rows: [GroupItem]
        if let owner = try await context.library.group(id, kind: .albumArtist) {
            item = owner
            rows = try await groupRows(GroupQuery(kind: .album, artist: id), offset: 0, limit: 10_000)
        } else if var credited = try await context.library.group(id, kind: .artist) {
            rows = try await library.appearances(of: id)
            credited.albumCount = rows.count
            item = credited
        } else {
            throw SubsonicError.notFound("artist ar-\(id)")
        }
        let stars = try await groupStars(of: try call.signedIn)
        let artist = SubsonicArtist(
            item: item, starred: stars.artists[item.id], albums: try await albums(rows, stars: stars), roles: try await artistRoles([item])[item.id],
            musicBrainzId: try await artistMusicBrainzID(item))
        return .element("artist", artist)
    }

    /// getAlbum: the album and its songs.
    func getAlbum(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard case .album(let id) = try call.parameters.id() else { throw SubsonicError.notFound("album '\(call.parameters.value("id") ?? "")'") }
        let item = try await albumItem(id)
        let ids = try await library.albumTracks(id).map(\.id)
        let songs = try await self.songs(ids, for: user)
        let stars = try await groupStars(of: user)
        let album = SubsonicAlbum(
            item: item, created: item.created ?? songs.map(\.track.dateAdded).min(), starred: stars.albums[item.id], songs: songs)
        return .element("album", album)
    }

    /// getSong.
    func getSong(_ call: SubsonicCall) async throws -> SubsonicReply {
        let id = try call.parameters.trackID()
        let user = try call.signedIn
        if let song = try await songs([id], for: user).first { return .element("song", song) }
        // A track whose file is missing is in no list but still readable by its ID.
        guard let track = try await library.track(id) else { throw SubsonicError.notFound("song tr-\(id)") }
        let data = try await context.library.userTrackData(for: user.id, tracks: [id])
        return .element("song", SubsonicSong(track, data[id]))
    }

    /// getGenres: every genre with its song and album counts.
    func genres() async throws -> SubsonicReply {
        var genres: [SubsonicGenre] = []
        var cursor: PageCursor?
        repeat {
            let page = try await library.groups(GroupQuery(kind: .genre), after: cursor, limit: 5_000)
            genres += page.items.map { SubsonicGenre(name: $0.name, songCount: $0.trackCount, albumCount: $0.albumCount) }
            cursor = page.nextCursor
        } while cursor != nil
        return .container("genres", "genre", genres)
    }

    // MARK: Folder-style browsing

    /// getMusicDirectory: an artist's directory holds its albums, an album's its songs; the IDs
    /// are the tag-browsing ones, so both ways of browsing name the same things.
    func musicDirectory(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        switch try call.parameters.id() {
        case .artist(let id):
            let artist = try await artistItem(id)
            let rows = try await groupRows(GroupQuery(kind: .album, artist: id), offset: 0, limit: 10_000)
            let albums = try await albums(rows, child: true, stars: try await groupStars(of: user))
            return .element(
                "directory",
                SubsonicDirectory(
                    id: .artist(id), name: SubsonicPlaceholder.name(artist.name, SubsonicPlaceholder.artist), albumCount: artist.albumCount, albums: albums))
        case .folder(let id):
            return try await folderDirectory(id, user: user)
        case .album(let id):
            let album = try await albumItem(id)
            let ids = try await library.albumTracks(id).map(\.id)
            return .element(
                "directory",
                SubsonicDirectory(
                    id: .album(id), name: SubsonicPlaceholder.name(album.name, SubsonicPlaceholder.album), parent: album.artistID.map { .artist($0) },
                    songCount: album.trackCount,
                    songs: try await songs(ids, for: user)))
        default:
            throw SubsonicError.notFound("directory '\(call.parameters.value("id") ?? "")' (a folder, artist or album ID)")
        }
    }

    // MARK: Info, similar and top songs

    /// getArtistInfo(2): Shelf has no biographies, so the body is empty, for an artist that exists.
    func artistInfo(_ call: SubsonicCall, element: String) async throws -> SubsonicReply {
        guard case .artist(let id) = try call.parameters.id() else { throw SubsonicError.notFound("artist '\(call.parameters.value("id") ?? "")'") }
        _ = try await artistItem(id)
        return .element(element, SubsonicEmpty())
    }

    /// getAlbumInfo(2): an empty `albumInfo` for an album that exists.
    func albumInfo(_ call: SubsonicCall) async throws -> SubsonicReply {
        guard case .album(let id) = try call.parameters.id() else { throw SubsonicError.notFound("album '\(call.parameters.value("id") ?? "")'") }
        _ = try await albumItem(id)
        return .element("albumInfo", SubsonicEmpty())
    }

    /// getTopSongs: an artist's most played songs, by `artist` (its name, as the spec has it) or
    /// by `id` (its ArtistID3 ID, which apps that browse by tags hold).
    func topSongs(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let artist: String
        var artistID: GroupID?
        if p.has("id") {
            guard case .artist(let id) = try p.id() else { throw SubsonicError.notFound("artist '\(p.value("id") ?? "")'") }
            artist = try await artistItem(id).name
            artistID = id
        } else {
            artist = try p.required("artist")
        }
        let count = try p.int("count", default: 50, in: 0...500) ?? 50
        let query = LibraryQuery(
            sort: .playCount, descending: true,
            filter: .and([.or([.text(.artist, .equals(artist)), .text(.albumArtist, .equals(artist))]), .range(.playCount, lower: 1, upper: nil)]))
        let ids: [TrackID]
        if let artistID {
            // By ID: the name's tracks less those of its namesakes (told apart by MusicBrainz ID).
            ids = try await library.tracks(try await library.snapshot(query), creditedTo: artistID, limit: count)
        } else {
            ids = try await trackRows(query, offset: 0, limit: count)
        }
        return .container("topSongs", "song", try await songs(ids, for: try call.signedIn))
    }

    // MARK: The artist index

    /// getArtists (`element` "artists") and getIndexes ("indexes", with `lastModified` and
    /// `ifModifiedSince`): every album artist under the engine's sections, in view order.
    func artists(_ call: SubsonicCall, element: String, lastModified: Bool) async throws -> SubsonicReply {
        let stars = try await groupStars(of: try call.signedIn)
        let token = try await library.currentToken()
        var changed: Int?
        if lastModified {
            // Milliseconds of the last write; a client that has the index since then gets none.
            let last = Int(((try await library.lastChangeDate())?.timeIntervalSince1970 ?? 0) * 1000)
            changed = last
            if let since = try call.parameters.int("ifModifiedSince", in: 0...Int.max), last <= since {
                return .body { w in
                    w.open(element)
                    w.attribute("ignoredArticles", Self.ignoredArticles)
                    w.attribute("lastModified", last)
                    w.close()
                }
            }
        }
        let format = call.format
        let key = SubsonicIndexCache.Key(
            element: element, scope: LibraryScope.current,
            stars: stars.artists.sorted { $0.key < $1.key }.flatMap { [$0.key.rawValue, Int64($0.value.timeIntervalSince1970 * 1000)] },
            json: format.isJSON, olderClient: !format.isJSON && SubsonicRenderer.olderClient)
        if let kept = indexCache.entry(key) {
            // getIndexes' answer carries the time of the last write; getArtists' only the views,
            // which a play or a rating leaves as they were.
            var current = kept.token == token
            if !current && !lastModified && kept.settled { current = !(try await library.viewsChanged(since: kept.token)) }
            if current {
                if kept.token != token { indexCache.store(key, token, kept.body, settled: true) }
                return .binary(SubsonicRenderer.response(kept.body, format: format))
            }
        }
        // Read before the index: a render that began before the mirror caught up is kept for its
        // token alone, never carried over later writes.
        let settled = try await library.viewsHold(token)
        var indexes: [SubsonicIndex<SubsonicArtist>] = []
        var cursor: PageCursor?
        repeat {
            // No artwork lookup: a track read per artist would be most of the index's cost (`hasPicture`).
            let page = try await library.groups(GroupQuery(kind: .albumArtist), after: cursor, limit: 5_000, artwork: false)
            let roles = try await artistRoles(page.items)
            for item in page.items {
                if indexes.last?.name != item.section { indexes.append(SubsonicIndex(name: item.section, artists: [])) }
                indexes[indexes.count - 1].artists.append(SubsonicArtist(item: item, starred: stars.artists[item.id], roles: roles[item.id]))
            }
            cursor = page.nextCursor
        } while cursor != nil
        // JSONP is the JSON body inside its callback, so one entry serves both.
        let body = SubsonicRenderer.document(json: format.isJSON, capacity: 256 * 1024) { w in
            w.open(element)
            w.attribute("ignoredArticles", Self.ignoredArticles)
            w.attribute("lastModified", changed)
            w.list("index", indexes)
            w.close()
        }
        indexCache.store(key, token, body, settled: settled)
        return .binary(SubsonicRenderer.response(body, format: format))
    }
}
