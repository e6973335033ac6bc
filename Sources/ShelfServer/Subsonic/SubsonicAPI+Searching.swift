import Foundation
import Shelf
import ShelfCore

/// Searching: search2 and search3, and the deprecated first search answered by the same search.
extension SubsonicAPI {
    /// search2/search3: artists, albums and songs matching `query`; an empty query lists
    /// everything in the views' orders, which is how apps sync a whole library.
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
        var artists: [SubsonicArtist] = []
        var albums: [SubsonicAlbum] = []
        let songs: [SubsonicSong]
        let stars = try await groupStars(of: user)
        if SearchQuery(text).isEmpty {
            // Everything, in the views' orders: what apps use to sync a whole library.
            let rows = try await groupRows(GroupQuery(kind: .albumArtist), offset: artistOffset, limit: artistCount)
            let roles = try await artistRoles(rows)
            artists = rows.map { SubsonicArtist(item: $0, starred: stars.artists[$0.id], roles: roles[$0.id]) }
            albums = try await self.albums(try await groupRows(GroupQuery(kind: .album), offset: albumOffset, limit: albumCount), child: child, stars: stars)
            let ids = try await trackRows(LibraryQuery(sort: .albumArtist), offset: songOffset, limit: songCount)
            songs = try await self.songs(ids, for: user)
        } else {
            // Artists and albums: those of the best song hits, in hit order.
            let hits = try await trackRows(LibraryQuery(), search: text, offset: 0, limit: 1_000)
            let tracks = try await library.tracks(ids: hits).tracks
            var artistIDs: [GroupID] = []
            var albumIDs: [GroupID] = []
            var seenArtists = Set<GroupID>()
            var seenAlbums = Set<GroupID>()
            let words = SearchQuery(text)
            for track in tracks {
                let ids = Library.groupIDs(of: track)
                if let artist = ids.albumArtist, Self.mentions(words, track.albumArtist ?? track.artist), seenArtists.insert(artist).inserted {
                    artistIDs.append(artist)
                }
                if let album = ids.album, Self.mentions(words, track.album), seenAlbums.insert(album).inserted { albumIDs.append(album) }
            }
            for id in artistIDs.dropFirst(artistOffset).prefix(artistCount) {
                if let item = try await library.group(id, kind: .albumArtist) { artists.append(SubsonicArtist(item: item, starred: stars.artists[item.id])) }
            }
            let roles = try await artistRoles(artists.map(\.item))
            for index in artists.indices { artists[index].roles = roles[artists[index].item.id] }
            albums = try await self.albums(try await albumItems(Array(albumIDs.dropFirst(albumOffset).prefix(albumCount))), child: child, stars: stars)
            let ids = try await trackRows(LibraryQuery(), search: text, offset: songOffset, limit: songCount)
            songs = try await self.songs(ids, for: user)
        }
        return .body { [artists, albums] w in
            w.open(element)
            w.list("artist", artists)
            w.list("album", albums)
            w.list("song", songs)
            w.close()
        }
    }

    /// search (Subsonic 1.0, deprecated): songs matching `artist`, `album`, `title` and `any`
    /// together, `count` from `offset`, optionally only those added after `newerThan` (ms).
    func searchV1(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let words = ["artist", "album", "title", "any"].compactMap { p.value($0) }.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard !words.isEmpty else { throw SubsonicError.missing("any") }
        let count = try p.int("count", default: 20, in: 0...500) ?? 20
        let offset = try p.int("offset", default: 0, in: 0...Int(Int32.max)) ?? 0
        let newer = try p.int("newerThan", in: 0...Int(Int64.max)).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        let text = words.joined(separator: " ")
        var ids: [TrackID]
        let total: Int
        if let newer {
            // Filtered by date: the hits are read once and cut here (a rare, old call).
            let hits = try await trackRows(LibraryQuery(), search: text, offset: 0, limit: 10_000)
            let added = try await library.tracks(ids: hits, fields: .song).tracks.filter { $0.dateAdded > newer }.map(\.id)
            total = added.count
            ids = Array(added.dropFirst(offset).prefix(count))
        } else {
            ids = try await trackRows(LibraryQuery(), search: text, offset: offset, limit: count)
            total = try await library.search(text, after: nil, limit: 1).total
        }
        let songs = try await self.songs(ids, for: user)
        return .body { w in
            w.open("searchResult")
            w.attribute("offset", offset)
            w.attribute("totalHits", total)
            w.list("match", songs)
            w.close()
        }
    }

    /// Whether any typed word occurs in `value` (an artist or album among a search's hits).
    static func mentions(_ query: SearchQuery, _ value: String?) -> Bool {
        let tokens = SearchText.tokens(value)
        return query.words.indices.contains { query.phrase($0, occursIn: tokens) }
    }
}
