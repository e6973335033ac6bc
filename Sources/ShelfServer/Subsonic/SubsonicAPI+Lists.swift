import Foundation
import Shelf
import ShelfCore

/// Album and song lists: album lists of every type, random songs, songs by genre, now playing
/// and starred.
extension SubsonicAPI {
    /// getAlbumList(2): albums of the library (or one folder) in the order `type` names.
    func albumList(_ call: SubsonicCall, element: String, child: Bool) async throws -> SubsonicReply {
        let p = call.parameters
        let type = try p.required("type")
        let size = try p.int("size", default: 10, in: 0...500) ?? 10
        let offset = try p.int("offset", default: 0, in: 0...Int(Int32.max)) ?? 0
        // musicFolderId needs nothing here: the call's scope (its libraries) narrows every read,
        // the album views included.
        let owner = try call.signedIn.isOwner
        var items: [GroupItem]
        switch type {
        case "alphabeticalByName":
            items = try await groupRows(GroupQuery(kind: .album), offset: offset, limit: size)
        case "alphabeticalByArtist":
            // The album view by album artist, then album: a deep page skips index entries, not songs.
            items = try await groupRows(GroupQuery(kind: .album, byArtist: true), offset: offset, limit: size)
        case "frequent" where !owner, "recent" where !owner, "highest" where !owner:
            // Another user's plays and ratings are their own rows, not the track's (the owner's).
            let order: UserTrackOrder = type == "frequent" ? .mostPlayed : type == "recent" ? .recentlyPlayed : .bestRated
            let ids = try await library.userTracks(of: try call.signedIn.id, by: order)
            items = try await albumItems(try await albumsOf(ids, offset: offset, limit: size))
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
                query = LibraryQuery(
                    sort: .year, descending: from > to,
                    filter: .range(.year, lower: Double(min(from, to)), upper: Double(max(from, to))))
            default:
                let genre = try p.required("genre")
                query = LibraryQuery(sort: .albumArtist, filter: .text(.genre, .equals(genre)))
            }
            items = try await albumItems(
                try await albumsOfTracks(
                    LibraryQuery(sort: query.sort, descending: query.descending, filter: query.filter), offset: offset, limit: size))
        case "random":
            // Albums drawn uniformly from the album view: its IDs from the name index, then the
            // rows of the ones drawn in one read.
            items = try await library.randomGroups(kind: .album, count: size)
        case "starred":
            let albums = try await library.starredGroups(of: try call.signedIn.id, kind: .album).map(\.id)
            items = try await albumItems(Array(albums.dropFirst(offset).prefix(size)))
        default:
            throw SubsonicError(
                0, "type '\(type)' is not one of random, newest, highest, frequent, recent, alphabeticalByName, alphabeticalByArtist, starred, byYear, byGenre")
        }
        let stars = try await groupStars(of: try call.signedIn)
        return .container(element, "album", try await albums(items, child: child, stars: stars))
    }

    /// Albums `limit` from album `offset` of those met walking `ids` in order (each album where its
    /// first track is), reading the tracks a thousand at a time (those the reader cannot see are skipped).
    func albumsOf(_ ids: [TrackID], offset: Int, limit: Int) async throws -> [GroupID] {
        var seen = Set<GroupID>()
        var albums: [GroupID] = []
        var start = 0
        while start < ids.count && albums.count < offset + limit {
            let chunk = Array(ids[start..<min(ids.count, start + 1_000)])
            let byID = Dictionary(try await library.tracks(ids: chunk).tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in chunk {
                guard let track = byID[id], let album = Library.groupIDs(of: track).album else { continue }
                if seen.insert(album).inserted { albums.append(album) }
            }
            start += chunk.count
        }
        return Array(albums.dropFirst(offset).prefix(limit))
    }

    /// getRandomSongs: `size` songs drawn uniformly from the library (or its folder, genre and years).
    func randomSongs(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let size = try p.int("size", default: 10, in: 0...500) ?? 10
        var filters: [Filter] = []
        if let genre = p.value("genre"), !genre.isEmpty { filters.append(.text(.genre, .equals(genre))) }
        let from = try p.int("fromYear", in: -9999...9999)
        let to = try p.int("toYear", in: -9999...9999)
        if from != nil || to != nil { filters.append(.range(.year, lower: from.map(Double.init), upper: to.map(Double.init))) }
        // The whole library is drawn from by row ID (a probe a song); a narrowed one is listed.
        guard !filters.isEmpty else { return .container("randomSongs", "song", try await songs(try await library.randomTracks(size), for: try call.signedIn)) }
        let ids = try await library.snapshot(LibraryQuery(filter: .and(filters)))
        var generator = SystemRandomNumberGenerator()
        var picked: [TrackID] = []
        var chosen = Set<Int>()
        while picked.count < min(size, ids.count) {
            let index = Int.random(in: 0..<ids.count, using: &generator)
            if chosen.insert(index).inserted { picked.append(ids[index]) }
        }
        return .container("randomSongs", "song", try await songs(picked, for: try call.signedIn))
    }

    /// getSongsByGenre: `count` songs of a genre from `offset`, in album-artist order.
    func songsByGenre(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let genre = try p.required("genre")
        let count = try p.int("count", default: 10, in: 0...500) ?? 10
        let offset = try p.int("offset", default: 0, in: 0...Int(Int32.max)) ?? 0
        let filter = Filter.text(.genre, .equals(genre))
        let ids = try await trackRows(LibraryQuery(sort: .albumArtist, filter: filter), offset: offset, limit: count)
        return .container("songsByGenre", "song", try await songs(ids, for: try call.signedIn))
    }

    /// getNowPlaying: every user's current song (`entry`), with who, how many minutes ago and the client.
    func getNowPlaying(_ call: SubsonicCall) async throws -> SubsonicReply {
        let viewer = try call.signedIn
        var entries: [SubsonicSong] = []
        for entry in nowPlaying.current() {
            guard var song = try await songs([entry.track], for: viewer).first else { continue }
            song.nowPlaying = (entry.user.name, Int(Date().timeIntervalSince(entry.since) / 60), entry.player)
            entries.append(song)
        }
        return .container("nowPlaying", "entry", entries)
    }

    /// getStarred2/getStarred: the user's starred artists, albums and songs, most recent first.
    func starred(_ call: SubsonicCall, element: String) async throws -> SubsonicReply {
        let user = try call.signedIn
        let stars = try await groupStars(of: user)
        var artists: [SubsonicArtist] = []
        for (id, date) in try await library.starredGroups(of: user.id, kind: .albumArtist) {
            if let item = try await library.group(id, kind: .albumArtist) { artists.append(SubsonicArtist(item: item, starred: date)) }
        }
        let roles = try await artistRoles(artists.map(\.item))
        for index in artists.indices { artists[index].roles = roles[artists[index].item.id] }
        let rows = try await albumItems(try await library.starredGroups(of: user.id, kind: .album).map(\.id))
        let albums = try await albums(rows, child: element == "starred", stars: stars)
        let songs = try await songs(try await library.starredTracks(of: user.id), for: user)
        return .body { [artists] w in
            w.open(element)
            w.list("artist", artists)
            w.list("album", albums)
            w.list("song", songs)
            w.close()
        }
    }
}
