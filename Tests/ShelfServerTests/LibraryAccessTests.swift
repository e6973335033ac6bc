import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

@testable import ShelfServer

/// One server, two libraries, and `bob` limited to the first: every OpenSubsonic endpoint and
/// every native route, given IDs from the second library, answers exactly as for IDs that do not
/// exist (the same HTTP status, Subsonic status and error code, in JSON and XML, with no name
/// of the hidden library in the body), and nothing of the second library is listed or counted.
@Suite struct LibraryAccessTests {
    /// The served library, split by album-artist folder into "Family" (about half) and "Crates".
    struct Split {
        let served: InProcessServer
        let family: MusicLibrary
        let crates: MusicLibrary
        /// Tracks of each, by ID.
        let familyTracks: Set<TrackID>
        let crateTracks: [Track]
        /// Bob's API key (the native API).
        let bobKey: String
    }

    static func split() async throws -> Split {
        let served = try await InProcessServer(tracks: 160, seed: 11)
        let library = served.library
        let all = try await library.tracks(ids: try await library.snapshot(LibraryQuery())).tracks
        // Each album artist's folder is a root: the first half of them Family's, the rest Crates'.
        let folders = Array(Set(all.map { Library.parentPath(Library.parentPath($0.path)) })).sorted()
        let half = folders.count / 2
        let family = try await library.addLibrary(name: "Family", roots: folders[..<half].map { URL(fileURLWithPath: $0) }, evenIfAbsent: true)
        let crates = try await library.addLibrary(name: "Crates", roots: folders[half...].map { URL(fileURLWithPath: $0) }, evenIfAbsent: true)
        let bob = try #require(try await library.user(named: "bob"))
        try await library.setLibraries(bob.id, [family.id])
        let familyScope = try await library.scope(libraries: [family.id])
        let (_, key) = try await library.createAPIKey(for: bob.id)
        return Split(
            served: served, family: family, crates: crates, familyTracks: Set(all.filter { familyScope.contains(path: $0.path) }.map(\.id)),
            crateTracks: all.filter { !familyScope.contains(path: $0.path) }, bobKey: key)
    }

    /// A Subsonic answer reduced to what must not tell a hidden ID from a made-up one: HTTP
    /// status, Subsonic status, error code, and the message with the ID written as `ID`.
    static func shape(_ answer: InProcessServer.Answer, id: String, format: String) -> String {
        // The ID as sent (`tr-100`) and its number alone ("no track with ID 100").
        func masked(_ text: String) -> String {
            let number = id.split(separator: "-").last.map(String.init) ?? id
            return text.replacingOccurrences(of: id, with: "ID").replacingOccurrences(
                of: "\\b\(number)\\b", with: "ID", options: .regularExpression)
        }
        var text = masked(answer.text)
        if format == "json", let object = try? answer.json(), let response = object["subsonic-response"] as? [String: Any] {
            let error = response["error"] as? [String: Any]
            text = "\(response["status"] ?? "") \(error?["code"] ?? "") \(masked(error?["message"] as? String ?? ""))"
        }
        return "\(answer.status) \(answer.header("Content-Type") ?? "") \(text)"
    }

    @Test func idsOfAnotherLibraryAnswerAsIDsThatDoNotExist() async throws {
        let split = try await Self.split()
        let served = split.served
        let library = served.library
        let hidden = try #require(split.crateTracks.first { $0.artworkID != nil } ?? split.crateTracks.first)
        let groups = Library.groupIDs(of: hidden)
        let album = try #require(groups.album)
        let artist = try #require(groups.albumArtist)
        let folder = FolderID(path: Library.parentPath(hidden.path))
        // Ann (an admin) makes a public playlist of hidden songs: Bob sees it, empty.
        let ann = try #require(try await library.user(named: "ann"))
        let items = Array(split.crateTracks.prefix(3).map(\.id))
        let playlist = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "ann's crates"))
            try batch.setPlaylistItems(id, items)
            try batch.setPlaylistOwner(id, ann.id, public: true)
            return id
        }

        // Every endpoint that takes an ID, with the hidden object's ID and a made-up one of the same kind.
        let calls: [(endpoint: String, parameter: String, hidden: String, madeUp: String, extra: [(String, String)])] = [
            ("getSong", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("getAlbum", "id", "al-\(album)", "al-12345678901", []),
            ("getArtist", "id", "ar-\(artist)", "ar-12345678901", []),
            ("getMusicDirectory", "id", "al-\(album)", "al-12345678901", []),
            ("getMusicDirectory", "id", "ar-\(artist)", "ar-12345678901", []),
            ("getMusicDirectory", "id", "fo-\(folder)", "fo-12345678901", []),
            ("getCoverArt", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("getCoverArt", "id", "al-\(album)", "al-12345678901", []),
            ("getCoverArt", "id", "ar-\(artist)", "ar-12345678901", []),
            ("getCoverArt", "id", "fo-\(folder)", "fo-12345678901", []),
            ("stream", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("download", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("getLyricsBySongId", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("getAlbumInfo2", "id", "al-\(album)", "al-12345678901", []),
            ("getArtistInfo2", "id", "ar-\(artist)", "ar-12345678901", []),
            ("getSimilarSongs2", "id", "ar-\(artist)", "ar-12345678901", []),
            ("getTopSongs", "id", "ar-\(artist)", "ar-12345678901", []),
            ("star", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("star", "albumId", "al-\(album)", "al-12345678901", []),
            ("unstar", "artistId", "ar-\(artist)", "ar-12345678901", []),
            ("setRating", "id", "tr-\(hidden.id)", "tr-987654", [("rating", "5")]),
            ("scrobble", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("createBookmark", "id", "tr-\(hidden.id)", "tr-987654", [("position", "1000")]),
            ("savePlayQueue", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("createPlaylist", "songId", "tr-\(hidden.id)", "tr-987654", [("name", "mine")]),
            ("createShare", "id", "tr-\(hidden.id)", "tr-987654", []),
            ("createShare", "id", "al-\(album)", "al-12345678901", []),
            ("getAlbumList2", "musicFolderId", String(split.crates.id), "987", [("type", "newest")]),
            ("getRandomSongs", "musicFolderId", String(split.crates.id), "987", []),
            ("getIndexes", "musicFolderId", String(split.crates.id), "987", []),
        ]
        for call in calls {
            for format in ["json", "xml"] {
                let seen = await served.subsonic(call.endpoint, [(call.parameter, call.hidden)] + call.extra, user: "bob", format: format)
                let madeUp = await served.subsonic(call.endpoint, [(call.parameter, call.madeUp)] + call.extra, user: "bob", format: format)
                #expect(
                    Self.shape(seen, id: call.hidden, format: format) == Self.shape(madeUp, id: call.madeUp, format: format),
                    "\(call.endpoint) \(call.parameter)=\(call.hidden) in \(format): \(seen.text) against \(madeUp.text)")
                #expect(!seen.text.contains(hidden.title ?? "\u{0}") && !seen.text.contains(hidden.album ?? "\u{0}"), "\(call.endpoint): \(seen.text)")
            }
        }
        // Nothing was written by any of them.
        let bob = try #require(try await library.user(named: "bob"))
        #expect(try await library.starredTracks(of: bob.id).isEmpty)
        #expect(try await library.bookmarks(of: bob.id).isEmpty)
        #expect(try await library.shares(of: bob.id).isEmpty)

        // Ann's public playlist shows Bob none of its hidden songs, in its count and duration too.
        let playlists = try await served.subsonicJSON("getPlaylists", user: "bob")
        let listed = ((playlists["playlists"] as? [String: Any])?["playlist"] as? [[String: Any]]) ?? []
        let annsList = try #require(listed.first { $0["name"] as? String == "ann's crates" })
        #expect(annsList["songCount"] as? Int == 0 && annsList["duration"] as? Int == 0, "\(annsList)")
        let opened = try await served.subsonicJSON("getPlaylist", [("id", "pl-\(playlist)")], user: "bob")
        let entries: [Any] = (opened["playlist"] as? [String: Any])?["entry"] as? [Any] ?? []
        #expect(entries.isEmpty)
    }

    @Test func listsSearchesViewsAndCountsHoldOnlyTheReadersLibraries() async throws {
        let split = try await Self.split()
        let served = split.served
        // getMusicFolders: Bob sees Family alone; Ann every library.
        let bobFolders = try await served.subsonicJSON("getMusicFolders", user: "bob")
        let names = (((bobFolders["musicFolders"] as? [String: Any])?["musicFolder"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["Family"])
        let annFolders = try await served.subsonicJSON("getMusicFolders")
        #expect((((annFolders["musicFolders"] as? [String: Any])?["musicFolder"] as? [[String: Any]]) ?? []).count == 3)

        // search3 "" pages through every song Bob may see, exactly once each.
        var seen: [String] = []
        var offset = 0
        while true {
            let page = try await served.subsonicJSON(
                "search3", [("query", ""), ("songCount", "100"), ("songOffset", String(offset)), ("artistCount", "0"), ("albumCount", "0")], user: "bob")
            let songs = ((page["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            seen += songs.compactMap { $0["id"] as? String }
            if songs.count < 100 { break }
            offset += 100
        }
        #expect(Set(seen) == Set(split.familyTracks.map { "tr-\($0)" }) && seen.count == split.familyTracks.count)

        // The album list's albums and their song counts add up to Family's tracks alone.
        let albums = try await served.subsonicJSON("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500")], user: "bob")
        let albumRows = ((albums["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]) ?? []
        #expect(albumRows.reduce(0) { $0 + ($1["songCount"] as? Int ?? 0) } == split.familyTracks.count)
        let crateAlbums = Set(split.crateTracks.compactMap { Library.groupIDs(of: $0).album.map { "al-\($0)" } })
        let familyAlbums = Set(
            try await split.served.library.tracks(ids: Array(split.familyTracks)).tracks.compactMap { Library.groupIDs(of: $0).album.map { "al-\($0)" } })
        #expect(Set(albumRows.compactMap { $0["id"] as? String }) == familyAlbums)
        #expect(crateAlbums.isDisjoint(with: familyAlbums))

        // Random picks, genres and artists likewise.
        let random = try await served.subsonicJSON("getRandomSongs", [("size", "50")], user: "bob")
        for song in ((random["randomSongs"] as? [String: Any])?["song"] as? [[String: Any]]) ?? [] {
            #expect(split.familyTracks.contains(TrackID(Int64(((song["id"] as? String) ?? "").dropFirst(3)) ?? 0)))
        }
        let genres = try await served.subsonicJSON("getGenres", user: "bob")
        let genreSongs = (((genres["genres"] as? [String: Any])?["genre"] as? [[String: Any]]) ?? []).reduce(0) { $0 + ($1["songCount"] as? Int ?? 0) }
        #expect(genreSongs <= split.familyTracks.count * 3 && genreSongs > 0)
        let artists = try await served.subsonicJSON("getArtists", user: "bob")
        let artistCount = (((artists["artists"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []).reduce(0) {
            $0 + (($1["artist"] as? [[String: Any]])?.count ?? 0)
        }
        let annArtists = try await served.subsonicJSON("getArtists")
        let allArtists = (((annArtists["artists"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []).reduce(0) {
            $0 + (($1["artist"] as? [[String: Any]])?.count ?? 0)
        }
        #expect(artistCount > 0 && artistCount < allArtists)

        // musicFolderId narrows Ann's lists to one library.
        let annFamily = try await served.subsonicJSON(
            "search3", [("query", ""), ("songCount", "500"), ("artistCount", "0"), ("albumCount", "0"), ("musicFolderId", String(split.family.id))])
        #expect((((annFamily["searchResult3"] as? [String: Any])?["song"] as? [Any]) ?? []).count == split.familyTracks.count)

        // The native API: the list's total, a hidden track, a hidden album, the library header.
        let bearer = ["authorization": "Bearer \(split.bobKey)"]
        let tracks = try await served.request("GET", "/api/tracks", query: [("limit", "1")], headers: bearer).json()
        #expect(tracks["total"] as? Int == split.familyTracks.count)
        let hidden = try #require(split.crateTracks.first)
        for (path, madeUp) in [
            ("/api/tracks/\(hidden.id)", "/api/tracks/987654"), ("/api/stream/\(hidden.id)", "/api/stream/987654"),
            ("/api/tracks/\(hidden.id)/artwork", "/api/tracks/987654/artwork"),
            ("/api/albums/\(Library.groupIDs(of: hidden).album!)/tracks", "/api/albums/12345678901/tracks"),
            ("/api/folders/\(FolderID(path: Library.parentPath(hidden.path)))", "/api/folders/12345678901"),
        ] {
            let seenAnswer = await served.request("GET", path, headers: bearer)
            let madeUpAnswer = await served.request("GET", madeUp, headers: bearer)
            #expect(seenAnswer.status == madeUpAnswer.status && errorCode(seenAnswer.text) == errorCode(madeUpAnswer.text), "\(path): \(seenAnswer.text)")
            #expect(!seenAnswer.text.contains(hidden.title ?? "\u{0}"))
        }
        let wrongLibrary = await served.request("GET", "/api/tracks", headers: bearer.merging(["x-shelf-library": String(split.crates.id)]) { a, _ in a })
        let noLibrary = await served.request("GET", "/api/tracks", headers: bearer.merging(["x-shelf-library": "987"]) { a, _ in a })
        #expect(wrongLibrary.status == 404 && wrongLibrary.status == noLibrary.status && errorCode(wrongLibrary.text) == errorCode(noLibrary.text))
        let search = try await served.request("GET", "/api/search", query: [("q", hidden.title ?? "x")], headers: bearer).json()
        #expect(
            ((search["items"] as? [[String: Any]]) ?? []).allSatisfy {
                split.familyTracks.contains(TrackID(($0["id"] as? Int64) ?? Int64($0["id"] as? Int ?? 0)))
            })
    }

    @Test func theChangeFeedAndFoldersShowOnlyTheReadersLibraries() async throws {
        let split = try await Self.split()
        let served = split.served
        let library = served.library
        let bearer = ["authorization": "Bearer \(split.bobKey)"]
        let token = try await library.currentToken()
        // Ann edits a hidden track and a visible one: Bob's feed names only the visible one.
        let hidden = try #require(split.crateTracks.first)
        let visible = try #require(split.familyTracks.min())
        try await library.write { batch in
            _ = try batch.updateTrack(hidden.id) { $0.title = "renamed in the crates" }
            _ = try batch.updateTrack(visible) { $0.title = "renamed in the family" }
        }
        let feed = await served.request("GET", "/api/changes", query: [("since", token.description)], headers: bearer)
        #expect(feed.status == 200, "\(feed.text)")
        #expect(feed.text.contains("\(visible)") && !feed.text.contains("renamed in the crates"))
        let changes = try feed.json()
        let updated = ((changes["changes"] as? [[String: Any]]) ?? []).flatMap { ((($0["tracks"] as? [String: Any])?["updated"] as? [[String: Any]]) ?? []) }
        #expect(!updated.contains { ($0["id"] as? Int).map { Int64($0) == hidden.id.rawValue } ?? false }, "\(changes)")

        // Folders: the roots Bob sees are Family's, and a walk down reaches each of its tracks once.
        let roots = try await served.request("GET", "/api/folders", headers: bearer).json()
        let rootIDs = ((roots["folders"] as? [[String: Any]]) ?? []).compactMap { ($0["id"] as? NSNumber)?.int64Value }
        #expect(rootIDs.count == split.family.roots.count)
        var reached: [Int64] = []
        var pending = rootIDs
        while let id = pending.popLast() {
            let folder = try await served.request("GET", "/api/folders/\(id)", headers: bearer).json()
            pending += ((folder["folders"] as? [[String: Any]]) ?? []).compactMap { ($0["id"] as? NSNumber)?.int64Value }
            reached += ((folder["tracks"] as? [[String: Any]]) ?? []).compactMap { ($0["id"] as? NSNumber)?.int64Value }
        }
        #expect(reached.count == split.familyTracks.count && Set(reached) == Set(split.familyTracks.map(\.rawValue)))

        // The same walk over OpenSubsonic: getIndexes, then getMusicDirectory down to every song.
        let indexes = try await served.subsonicJSON("getIndexes", user: "bob")
        var directories = (((indexes["indexes"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []).flatMap {
            (($0["artist"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        }
        var songs: [String] = (((indexes["indexes"] as? [String: Any])?["child"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        while let id = directories.popLast() {
            let directory = try await served.subsonicJSON("getMusicDirectory", [("id", id)], user: "bob")
            for child in ((directory["directory"] as? [String: Any])?["child"] as? [[String: Any]]) ?? [] {
                if child["isDir"] as? Bool == true {
                    directories.append(child["id"] as? String ?? "")
                } else {
                    #expect(child["parent"] as? String == id)
                    songs.append(child["id"] as? String ?? "")
                }
            }
        }
        #expect(songs.count == split.familyTracks.count && Set(songs) == Set(split.familyTracks.map { "tr-\($0)" }))
    }

    /// py-opensonic's strict models walk the server from getIndexes down, over folders (the
    /// default) and over tags, and reach every song exactly once.
    @Test func aFolderBrowsingAppReachesEverySongOnceInBothModes() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 12)
            defer { fixture.remove() }
            for mode in ["folders", "tags"] {
                let server = try ServerProcess(library: fixture.library, arguments: ["--subsonic-browse", mode])
                defer { server.stop() }
                try runModelChecks(server, "browse", "12")
            }
        }
    }
}
