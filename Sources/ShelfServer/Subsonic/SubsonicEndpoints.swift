import Foundation
import Shelf
import ShelfCore

/// The endpoints, by name. Every handler reads the engine's public API only.
extension SubsonicAPI {
    typealias Endpoint = @Sendable (SubsonicAPI, SubsonicCall) async throws -> SubsonicReply

    /// Implemented endpoints; any other name is answered 501.
    static let table: [String: Endpoint] = [
        "ping": { _, _ in .empty },
        "getLicense": { _, _ in .elements([SubsonicElement("license", [("valid", .bool(true))])]) },
        "getOpenSubsonicExtensions": { _, _ in
            .elements(extensions.map { name, versions in
                SubsonicElement("openSubsonicExtensions", repeated: true, [("name", .string(name))],
                                children: versions.map { SubsonicElement("versions", repeated: true, value: .int($0)) })
            })
        },
        "getMusicFolders": { api, _ in api.getMusicFolders() },
        "getScanStatus": { api, _ in try await api.scanStatus() },
        "getArtists": { api, call in try await api.artists(call, element: "artists", lastModified: false) },
        "getIndexes": { api, call in try await api.artists(call, element: "indexes", lastModified: true) },
        "getArtist": { api, call in try await api.getArtist(call) },
        "getAlbum": { api, call in try await api.getAlbum(call) },
        "getSong": { api, call in
            let user = try call.signedIn
            let id = try call.parameters.trackID()
            guard let song = try await api.songs([id], for: user).first else { throw SubsonicError.notFound("song tr-\(id)") }
            var single = song
            single.repeated = false
            return .elements([single])
        },
        "getGenres": { api, _ in try await api.genres() },
        "getAlbumList2": { api, call in try await api.albumList(call, element: "albumList2", child: false) },
        "getAlbumList": { api, call in try await api.albumList(call, element: "albumList", child: true) },
        "search3": { api, call in try await api.search(call, element: "searchResult3", child: false) },
        "search2": { api, call in try await api.search(call, element: "searchResult2", child: true) },
        "getRandomSongs": { api, call in try await api.randomSongs(call) },
        "getStarred2": { api, call in try await api.starred(call, element: "starred2") },
        "getStarred": { api, call in try await api.starred(call, element: "starred") },
        "stream": { api, call in try await api.stream(call) },
        "download": { api, call in
            _ = try call.signedIn
            return .binary(try await api.context.streams.file(try call.parameters.trackID(), request: call.http))
        },
        "getCoverArt": { api, call in try await api.coverArt(call) },
        "star": { api, call in try await api.star(call, true) },
        "unstar": { api, call in try await api.star(call, false) },
        "setRating": { api, call in try await api.setRating(call) },
        "scrobble": { api, call in try await api.scrobble(call) },
        "getPlaylists": { api, call in try await api.getPlaylists(call) },
        "getPlaylist": { api, call in try await api.getPlaylist(call) },
        "createPlaylist": { api, call in try await api.createPlaylist(call) },
        "updatePlaylist": { api, call in try await api.updatePlaylist(call) },
        "deletePlaylist": { api, call in try await api.deletePlaylist(call) },
    ]

    var library: Library { context.library }

    // MARK: Browsing

    /// The articles the engine's collation skips, as getArtists/getIndexes name them.
    static var ignoredArticles: String { SortKeyOptions.english.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") }

    func getArtist(_ call: SubsonicCall) async throws -> SubsonicReply {
        guard case .artist(let id) = try call.parameters.id() else { throw SubsonicError.notFound("artist '\(call.parameters.value("id") ?? "")'") }
        let item = try await artistItem(id)
        let albums = try await groupRows(GroupQuery(kind: .album, artist: id), offset: 0, limit: 10_000)
        let stars = try await groupStars(of: try call.signedIn)
        var element = Self.artist(item, children: try await albumElements(albums, stars: stars), starred: stars.artists[item.id])
        element.repeated = false
        return .elements([element])
    }

    func getAlbum(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard case .album(let id) = try call.parameters.id() else { throw SubsonicError.notFound("album '\(call.parameters.value("id") ?? "")'") }
        let item = try await albumItem(id)
        let ids = try await library.albumTracks(id).map(\.id)
        let songs = try await self.songs(ids, for: user)
        let tracks = try await library.tracks(ids: ids).tracks
        let stars = try await groupStars(of: user)
        var element = Self.album(item, created: tracks.map(\.dateAdded).min(), sortName: tracks.compactMap(\.sortAlbum).first ?? "", starred: stars.albums[item.id])
        element.repeated = false
        element.children = songs
        return .elements([element])
    }

    func genres() async throws -> SubsonicReply {
        var genres: [SubsonicElement] = []
        var cursor: PageCursor?
        repeat {
            let page = try await library.groups(GroupQuery(kind: .genre), after: cursor, limit: 5_000)
            genres += page.items.map {
                SubsonicElement("genre", repeated: true, [("songCount", .int($0.trackCount)), ("albumCount", .int($0.albumCount))], text: $0.name)
            }
            cursor = page.nextCursor
        } while cursor != nil
        return .elements([SubsonicElement("genres", children: genres)])
    }

    // MARK: Lists

    func albumList(_ call: SubsonicCall, element: String, child: Bool) async throws -> SubsonicReply {
        let p = call.parameters
        let type = try p.required("type")
        let size = try p.int("size", default: 10, in: 0...500) ?? 10
        let offset = try p.int("offset", default: 0, in: 0...Int(Int32.max)) ?? 0
        let folder = try folderFilter(p)
        let owner = try call.signedIn.isOwner
        /// A track list's filter narrowed to the folder asked for.
        func within(_ filter: Filter) -> Filter {
            guard let folder else { return filter }
            return filter == .all ? folder : .and([filter, folder])
        }
        var items: [GroupItem]
        switch type {
        case "alphabeticalByName" where folder != nil:
            // Views are of the whole library: a folder's albums come from its tracks in album order.
            items = try await albumItems(try await albumsOfTracks(LibraryQuery(sort: .album, filter: within(.all)), offset: offset, limit: size))
        case "alphabeticalByName":
            items = try await groupRows(GroupQuery(kind: .album), offset: offset, limit: size)
        case "alphabeticalByArtist":
            let ids = try await albumsOfTracks(LibraryQuery(sort: .albumArtist, filter: within(.all)), offset: offset, limit: size)
            items = try await albumItems(ids)
        case "frequent" where !owner, "recent" where !owner, "highest" where !owner:
            // Another user's plays and ratings are their own rows, not the track's (the owner's).
            let order: UserTrackOrder = type == "frequent" ? .mostPlayed : type == "recent" ? .recentlyPlayed : .bestRated
            let ids = try await library.userTracks(of: try call.signedIn.id, by: order)
            items = try await albumItems(try await albumsOf(ids, folder: folder, offset: offset, limit: size))
        case "newest", "frequent", "recent", "highest", "byYear", "byGenre":
            let query: LibraryQuery
            switch type {
            case "newest": query = LibraryQuery(sort: .dateAdded, descending: true)
            case "frequent": query = LibraryQuery(sort: .playCount, descending: true, filter: .range(.playCount, lower: 1, upper: nil))
            case "recent": query = LibraryQuery(sort: .lastPlayed, descending: true, filter: .not(.missingNumber(.lastPlayed)))
            case "highest": query = LibraryQuery(sort: .rating, descending: true, filter: .range(.rating, lower: 1, upper: nil))
            case "byYear":
                guard let from = try p.int("fromYear", in: -9999...9999) else { throw SubsonicError.missing("fromYear") }
                guard let to = try p.int("toYear", in: -9999...9999) else { throw SubsonicError.missing("toYear") }
                query = LibraryQuery(sort: .year, descending: from > to,
                                     filter: .range(.year, lower: Double(min(from, to)), upper: Double(max(from, to))))
            default:
                let genre = try p.required("genre")
                query = LibraryQuery(sort: .albumArtist, filter: .text(.genre, .equals(genre)))
            }
            items = try await albumItems(try await albumsOfTracks(LibraryQuery(sort: query.sort, descending: query.descending, filter: within(query.filter)), offset: offset, limit: size))
        case "random":
            let ids = try await library.snapshot(LibraryQuery(filter: within(.all))).shuffled()
            var seen = Set<GroupID>()
            var albums: [GroupID] = []
            for id in ids.prefix(size * 20) where albums.count < size {
                if let track = try await library.track(id), let album = Library.groupIDs(of: track).album, seen.insert(album).inserted { albums.append(album) }
            }
            items = try await albumItems(albums)
        case "starred":
            let albums = try await library.starredGroups(of: try call.signedIn.id, kind: .album).map(\.id)
            items = try await albumItems(Array(albums.dropFirst(offset).prefix(size)))
        default:
            throw SubsonicError(0, "type '\(type)' is not one of random, newest, highest, frequent, recent, alphabeticalByName, alphabeticalByArtist, starred, byYear, byGenre")
        }
        let stars = try await groupStars(of: try call.signedIn)
        return .elements([SubsonicElement(element, children: try await albumElements(items, child: child, stars: stars))])
    }

    /// Albums `limit` from album `offset` of those met walking `ids` in order (each album where its
    /// first track is), reading the tracks a thousand at a time; tracks outside `folder` are skipped.
    func albumsOf(_ ids: [TrackID], folder: Filter?, offset: Int, limit: Int) async throws -> [GroupID] {
        var seen = Set<GroupID>()
        var albums: [GroupID] = []
        var start = 0
        while start < ids.count && albums.count < offset + limit {
            let chunk = Array(ids[start..<min(ids.count, start + 1_000)])
            let byID = Dictionary(try await library.tracks(ids: chunk).tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in chunk {
                guard let track = byID[id], folder?.matches(track) ?? true, let album = Library.groupIDs(of: track).album else { continue }
                if seen.insert(album).inserted { albums.append(album) }
            }
            start += chunk.count
        }
        return Array(albums.dropFirst(offset).prefix(limit))
    }

    /// The album rows of `ids`, in order (an album gone since is left out).
    func albumItems(_ ids: [GroupID]) async throws -> [GroupItem] {
        var items: [GroupItem] = []
        for id in ids { if let item = try await library.group(id, kind: .album) { items.append(item) } }
        return items
    }

    func search(_ call: SubsonicCall, element: String, child: Bool) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        if element == "searchResult2" { _ = try p.required("query") }
        var text = p.value("query") ?? ""
        text = text.trimmingCharacters(in: .whitespaces)
        if text == "\"\"" || text == "*" { text = "" }
        func counts(_ name: String) throws(SubsonicError) -> (Int, Int) {
            (try p.int("\(name)Count", default: 20, in: 0...500) ?? 20, try p.int("\(name)Offset", default: 0, in: 0...Int(Int32.max)) ?? 0)
        }
        let (artistCount, artistOffset) = try counts("artist")
        let (albumCount, albumOffset) = try counts("album")
        let (songCount, songOffset) = try counts("song")
        var children: [SubsonicElement] = []
        let stars = try await groupStars(of: user)
        if SearchQuery(text).isEmpty {
            // Everything, in the views' orders: what apps use to sync a whole library.
            children += try await groupRows(GroupQuery(kind: .albumArtist), offset: artistOffset, limit: artistCount).map { Self.artist($0, starred: stars.artists[$0.id]) }
            children += try await albumElements(try await groupRows(GroupQuery(kind: .album), offset: albumOffset, limit: albumCount), child: child, stars: stars)
            let ids = try await trackRows(LibraryQuery(sort: .albumArtist, filter: try folderFilter(p) ?? .all), offset: songOffset, limit: songCount)
            children += try await songs(ids, for: user)
        } else {
            // Artists and albums: those of the best song hits, in hit order.
            let hits = try await trackRows(LibraryQuery(), search: text, offset: 0, limit: 1_000)
            let tracks = try await library.tracks(ids: hits).tracks
            var artists: [GroupID] = []
            var albums: [GroupID] = []
            var seenArtists = Set<GroupID>()
            var seenAlbums = Set<GroupID>()
            let words = SearchQuery(text)
            for track in tracks {
                let ids = Library.groupIDs(of: track)
                if let artist = ids.albumArtist, Self.mentions(words, track.albumArtist ?? track.artist), seenArtists.insert(artist).inserted { artists.append(artist) }
                if let album = ids.album, Self.mentions(words, track.album), seenAlbums.insert(album).inserted { albums.append(album) }
            }
            for id in artists.dropFirst(artistOffset).prefix(artistCount) {
                if let item = try await library.group(id, kind: .albumArtist) { children.append(Self.artist(item, starred: stars.artists[item.id])) }
            }
            children += try await albumElements(try await albumItems(Array(albums.dropFirst(albumOffset).prefix(albumCount))), child: child, stars: stars)
            let ids = try await trackRows(LibraryQuery(), search: text, offset: songOffset, limit: songCount)
            children += try await songs(ids, for: user)
        }
        return .elements([SubsonicElement(element, children: children)])
    }

    /// Whether any typed word occurs in `value` (an artist or album among a search's hits).
    static func mentions(_ query: SearchQuery, _ value: String?) -> Bool {
        let tokens = SearchText.tokens(value)
        return query.words.indices.contains { query.phrase($0, occursIn: tokens) }
    }

    func randomSongs(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let size = try p.int("size", default: 10, in: 0...500) ?? 10
        var filters: [Filter] = try folderFilter(p).map { [$0] } ?? []
        if let genre = p.value("genre"), !genre.isEmpty { filters.append(.text(.genre, .equals(genre))) }
        let from = try p.int("fromYear", in: -9999...9999)
        let to = try p.int("toYear", in: -9999...9999)
        if from != nil || to != nil { filters.append(.range(.year, lower: from.map(Double.init), upper: to.map(Double.init))) }
        let ids = try await library.snapshot(LibraryQuery(filter: filters.isEmpty ? .all : .and(filters)))
        var generator = SystemRandomNumberGenerator()
        var picked: [TrackID] = []
        var chosen = Set<Int>()
        while picked.count < min(size, ids.count) {
            let index = Int.random(in: 0..<ids.count, using: &generator)
            if chosen.insert(index).inserted { picked.append(ids[index]) }
        }
        return .elements([SubsonicElement("randomSongs", children: try await songs(picked, for: try call.signedIn))])
    }

    /// getStarred2/getStarred: the user's starred artists, albums and songs, most recent first.
    func starred(_ call: SubsonicCall, element: String) async throws -> SubsonicReply {
        let user = try call.signedIn
        let stars = try await groupStars(of: user)
        var children: [SubsonicElement] = []
        for (id, date) in try await library.starredGroups(of: user.id, kind: .albumArtist) {
            if let item = try await library.group(id, kind: .albumArtist) { children.append(Self.artist(item, starred: date)) }
        }
        let albums = try await albumItems(try await library.starredGroups(of: user.id, kind: .album).map(\.id))
        children += try await albumElements(albums, child: element == "starred", stars: stars)
        children += try await songs(try await library.starredTracks(of: user.id), for: user)
        return .elements([SubsonicElement(element, children: children)])
    }
}
