import Foundation
import Shelf
import ShelfTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Every read endpoint answers alike in JSON with token authentication and in XML with an API
/// key. Then every endpoint is fed what apps and attackers send by mistake: no parameters, IDs of the wrong
/// kind, unknown and malformed IDs, negative and huge numbers, a bad `f`, bad `enc:` hex. Each
/// answer is a well-formed failed response with the spec's code (HTTP 200, or 501 for what is not
/// implemented), in XML and in JSON; nothing is a 500, nothing crashes the server, nothing changes.
@Suite(.serialized) struct SubsonicBadInputTests {
    /// One endpoint: the parameters that make a valid call, which of them is an ID and what a
    /// wrong-kind ID for it is, and its number parameters.
    struct Endpoint {
        let name: String
        var valid: [(String, String)] = []
        /// The ID parameter, and an ID of another kind of object that exists.
        var id: (name: String, wrongKind: String)?
        var numbers: [String] = []
        /// Whether a call without parameters is already valid (nothing is required).
        var nothingRequired: Bool { valid.isEmpty }
    }

    /// Failed answers' codes (the spec's, with 0 for anything else) and HTTP statuses.
    static let codes: Set<Int> = [0, 10, 40, 41, 42, 43, 44, 50, 70]

    /// A failed response in both formats: its code, the same in XML and JSON.
    static func failure(_ client: SubsonicClient, _ name: String, _ parameters: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> Int?
    {
        let xml = try client.raw(name, parameters)
        #expect(xml.status == 200 || xml.status == 501, "\(name) \(parameters): HTTP \(xml.status)", sourceLocation: sourceLocation)
        let tree = try xmlTree(xml.body)
        let json = try client.raw(name, parameters + [("f", "json")])
        #expect(json.status == xml.status, "\(name) \(parameters)", sourceLocation: sourceLocation)
        let response = try #require((json.json as? [String: Any])?["subsonic-response"] as? [String: Any], "\(name): \(json.text)")
        guard response["status"] as? String == "failed" else {
            Issue.record("\(name) \(parameters) did not fail: \(json.text.prefix(300))", sourceLocation: sourceLocation)
            return nil
        }
        #expect(tree["status"] as? String == "failed", sourceLocation: sourceLocation)
        let error = try #require(response["error"] as? [String: Any])
        let code = try #require(error["code"] as? Int)
        #expect(Self.codes.contains(code), sourceLocation: sourceLocation)
        #expect(!((error["message"] as? String) ?? "").isEmpty, sourceLocation: sourceLocation)
        let xmlError = (tree["error"] as? [[String: Any]])?.first
        #expect(xmlError?["code"] as? String == String(code), "\(name) \(parameters): XML and JSON disagree", sourceLocation: sourceLocation)
        #expect(xmlError?["message"] as? String == error["message"] as? String, sourceLocation: sourceLocation)
        return code
    }

    @Test func everyEndpointAgreesAcrossFormatsAndAnswersBadInputWithItsError() async throws {
        try await offCooperativePool {
            // Real audio files (streams and covers answer), served in-process: every request goes
            // straight into the handlers, thousands of them without a socket or a curl each.
            let fixture = try ServedLibrary()
            defer { fixture.remove() }
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            let song = try #require(try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            let album = try #require(song["albumId"] as? String)
            let artist = try #require(song["artistId"] as? String)
            let created = try #require(try ann.ok("createPlaylist", [("name", "Mine"), ("songId", "tr-1")])["playlist"] as? [String: Any])
            let playlist = try #require(created["id"] as? String)
            let before = try fixture.json(["tracks", "--limit", "500"])

            let endpoints: [Endpoint] = [
                Endpoint(name: "ping"), Endpoint(name: "getLicense"), Endpoint(name: "getMusicFolders"), Endpoint(name: "getScanStatus"),
                Endpoint(name: "getArtists"), Endpoint(name: "getIndexes", numbers: ["ifModifiedSince"]),
                Endpoint(name: "getArtist", valid: [("id", artist)], id: ("id", album)),
                Endpoint(name: "getAlbum", valid: [("id", album)], id: ("id", artist)),
                Endpoint(name: "getSong", valid: [("id", "tr-1")], id: ("id", album)),
                Endpoint(name: "getGenres"),
                Endpoint(name: "getAlbumList2", valid: [("type", "newest")], numbers: ["size", "offset"]),
                Endpoint(name: "getAlbumList", valid: [("type", "alphabeticalByName")], numbers: ["size", "offset"]),
                Endpoint(name: "search3", numbers: ["artistCount", "artistOffset", "albumCount", "albumOffset", "songCount", "songOffset"]),
                Endpoint(name: "search2", valid: [("query", "")], numbers: ["artistCount", "albumCount", "songCount", "songOffset"]),
                Endpoint(name: "getRandomSongs", numbers: ["size"]),
                Endpoint(name: "getSongsByGenre", valid: [("genre", "Rock")], numbers: ["count", "offset"]),
                Endpoint(name: "getStarred2"), Endpoint(name: "getStarred"),
                Endpoint(name: "stream", valid: [("id", "tr-1")], id: ("id", album), numbers: ["maxBitRate", "timeOffset"]),
                Endpoint(name: "download", valid: [("id", "tr-1")], id: ("id", playlist)),
                Endpoint(name: "getCoverArt", valid: [("id", "tr-1")], numbers: ["size"]),
                Endpoint(name: "star", valid: [("id", "tr-1")], id: ("albumId", artist)),
                Endpoint(name: "unstar", valid: [("id", "tr-1")], id: ("artistId", album)),
                Endpoint(name: "setRating", valid: [("id", "tr-1"), ("rating", "3")], id: ("id", album), numbers: ["rating"]),
                Endpoint(name: "scrobble", valid: [("id", "tr-1"), ("submission", "false")], id: ("id", artist), numbers: ["time"]),
                Endpoint(name: "getPlaylists"),
                Endpoint(name: "getPlaylist", valid: [("id", playlist)], id: ("id", album)),
                Endpoint(name: "createPlaylist", valid: [("name", "x")], id: ("songId", album)),
                Endpoint(name: "updatePlaylist", valid: [("playlistId", playlist)], id: ("playlistId", "tr-1"), numbers: ["songIndexToRemove"]),
                Endpoint(name: "deletePlaylist", valid: [("id", playlist)], id: ("id", album)),
                Endpoint(name: "getLyricsBySongId", valid: [("id", "tr-1")], id: ("id", artist)),
                Endpoint(name: "getLyrics"),
                Endpoint(name: "getTopSongs", valid: [("artist", "x")], numbers: ["count"]),
                Endpoint(name: "getNowPlaying"),
                Endpoint(name: "getArtistInfo2", valid: [("id", artist)], id: ("id", album)),
                Endpoint(name: "getAlbumInfo2", valid: [("id", album)], id: ("id", artist)),
                Endpoint(name: "getAlbumInfo", valid: [("id", album)], id: ("id", "tr-1")),
                Endpoint(name: "getSimilarSongs2", valid: [("id", artist)], id: ("id", playlist), numbers: ["count"]),
                Endpoint(name: "getSimilarSongs", valid: [("id", "tr-1")], id: ("id", playlist), numbers: ["count"]),
                Endpoint(name: "getSonicSimilarTracks", valid: [("id", "tr-1")], id: ("id", album), numbers: ["count"]),
                Endpoint(name: "findSonicPath", valid: [("startSongId", "tr-1"), ("endSongId", "tr-2")], id: ("endSongId", artist), numbers: ["count"]),
                Endpoint(name: "savePlayQueue", id: ("id", album), numbers: ["position"]),
                Endpoint(name: "getPlayQueue"),
                Endpoint(name: "getMusicDirectory", valid: [("id", artist)], id: ("id", playlist)),
                Endpoint(name: "search", valid: [("any", "a")], numbers: ["count", "offset", "newerThan"]),
                Endpoint(name: "getUser", valid: [("username", "ann")]), Endpoint(name: "getUsers"),
                Endpoint(name: "createUser", valid: [("username", "x"), ("password", "y")], numbers: ["maxBitRate"]),
                Endpoint(name: "updateUser", valid: [("username", "bob")], numbers: ["maxBitRate"]),
                Endpoint(name: "deleteUser", valid: [("username", "nobody")]),
                Endpoint(name: "changePassword", valid: [("username", "bob"), ("password", "z")]),
                Endpoint(name: "getAvatar", valid: [("username", "ann")]),
                Endpoint(name: "getBookmarks"),
                Endpoint(name: "createBookmark", valid: [("id", "tr-1"), ("position", "10")], id: ("id", album), numbers: ["position"]),
                Endpoint(name: "deleteBookmark", valid: [("id", "tr-1")], id: ("id", artist)),
                Endpoint(name: "getPlayQueueByIndex"),
                Endpoint(name: "savePlayQueueByIndex", id: ("id", album), numbers: ["position", "currentIndex"]),
                Endpoint(
                    name: "reportPlayback", valid: [("mediaId", "tr-1"), ("mediaType", "song"), ("positionMs", "0"), ("state", "starting")],
                    id: ("mediaId", album), numbers: ["positionMs"]),
                Endpoint(name: "getInternetRadioStations"),
                Endpoint(name: "getShares"),
                Endpoint(name: "createShare", valid: [("id", "tr-1")], id: ("id", artist), numbers: ["expires"]),
                Endpoint(name: "updateShare", valid: [("id", "sh-1")], id: ("id", "tr-1"), numbers: ["expires"]),
                Endpoint(name: "deleteShare", valid: [("id", "sh-1")], id: ("id", album)),
                Endpoint(name: "createInternetRadioStation", valid: [("streamUrl", "https://radio.example/a"), ("name", "A")]),
                Endpoint(
                    name: "updateInternetRadioStation", valid: [("id", "rs-1"), ("streamUrl", "https://radio.example/a"), ("name", "A")],
                    id: ("id", "tr-1")),
                Endpoint(name: "deleteInternetRadioStation", valid: [("id", "rs-1")], id: ("id", album)),
                Endpoint(name: "getPodcasts", id: ("id", "tr-1")),
                Endpoint(name: "getNewestPodcasts", numbers: ["count"]),
            ]
            // Every read answers the same in JSON with token authentication as in XML with an API key,
            // and binary answers are the same bytes either way.
            let salt = "5eed"
            let token = SubsonicClient(
                server, auth: [("u", "ann"), ("t", Library.subsonicToken(password: ServedLibrary.annPassword, salt: salt)), ("s", salt)])
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let keyed = SubsonicClient(server, auth: [("apiKey", key)])
            let writes: Set<String> = [
                "star", "unstar", "setRating", "scrobble", "createPlaylist", "updatePlaylist", "deletePlaylist", "savePlayQueue", "createUser",
                "updateUser", "deleteUser", "changePassword", "createBookmark", "deleteBookmark", "savePlayQueueByIndex", "reportPlayback",
                "createInternetRadioStation", "updateInternetRadioStation", "deleteInternetRadioStation", "createShare", "updateShare", "deleteShare",
            ]
            let shuffled: Set<String> = ["getRandomSongs", "getSimilarSongs2", "getSimilarSongs"]
            for endpoint in endpoints where !writes.contains(endpoint.name) && !shuffled.contains(endpoint.name) {
                let viaKey = try keyed.raw(endpoint.name, endpoint.valid)
                if ["stream", "download", "getCoverArt", "getAvatar"].contains(endpoint.name) {
                    let viaToken = try token.raw(endpoint.name, endpoint.valid)
                    #expect(viaKey.status == 200 && viaKey.body == viaToken.body, "\(endpoint.name) bytes")
                    continue
                }
                let json = try #require(try token.raw(endpoint.name, endpoint.valid + [("f", "json")]).json as? [String: Any])
                let fromJSON = try #require((normalized(json) as? [String: Any])?["subsonic-response"] as? [Any]).first as? [String: Any]
                let xml = try xmlTree(viaKey.body)
                #expect(xml["status"] as? String == "ok", "\(endpoint.name): \(viaKey.text.prefix(300))")
                // `sonicMatch` is a list the spec requires: JSON carries it empty (nothing is analysed
                // here), where XML has no way to say an empty list but to leave it out.
                var expected = fromJSON ?? [:]
                if (expected["sonicMatch"] as? [Any])?.isEmpty ?? false { expected["sonicMatch"] = nil }
                #expect(NSDictionary(dictionary: xml).isEqual(to: expected), "\(endpoint.name): XML and JSON differ")
            }

            for endpoint in endpoints {
                let name = endpoint.name
                if !endpoint.nothingRequired {
                    // Missing: every required parameter dropped.
                    #expect(try Self.failure(ann, name, []) == 10, "\(name) without parameters")
                }
                if let id = endpoint.id {
                    let others = endpoint.valid.filter { $0.0 != id.name }
                    #expect(try Self.failure(ann, name, others + [(id.name, id.wrongKind)]) == 70, "\(name) \(id.name) of the wrong kind")
                    for unknown in ["tr-987654321", "al-987654321", "ar-987654321", "xyz", "tr-1x", ""] {
                        let code = try Self.failure(ann, name, others + [(id.name, unknown)])
                        #expect(code == 70 || (unknown.isEmpty && code == 10), "\(name) \(id.name)=\(unknown): \(String(describing: code))")
                    }
                }
                for number in endpoint.numbers {
                    for bad in ["-1", "99999999999999999999", "ten", "1.5"] {
                        #expect(try Self.failure(ann, name, endpoint.valid + [(number, bad)]) == 0, "\(name) \(number)=\(bad)")
                    }
                }
                // A bad f is answered in XML, whatever else was sent.
                let badFormat = try ann.raw(name, endpoint.valid + [("f", "yaml")])
                let badFormatStatus = try xmlTree(badFormat.body)["status"] as? String
                #expect(badFormat.status == 200 && badFormatStatus == "failed", "\(name) f=yaml")
                // Huge offsets are valid: past the end is an empty page, not an error or a slow walk.
                for offset in endpoint.numbers where offset.hasSuffix("ffset") && offset != "timeOffset" {
                    _ = try ann.ok(name, endpoint.valid + [(offset, "2147483647")])
                }
            }
            // Sizes beyond the largest page are refused with the range, not clamped silently.
            let tooBig = try ann.json("getAlbumList2", [("type", "newest"), ("size", "501")])
            #expect(((tooBig["error"] as? [String: Any])?["message"] as? String)?.contains("size") == true)
            // A jukebox that is off is a failed body, in both formats.
            #expect(try Self.failure(ann, "jukeboxControl", [("action", "status")]) == 0)
            #expect(try ann.raw("jukeboxControl", [("action", "status")]).status == 200)

            // Bad enc: hex, for a few endpoints (each failed sign-in counts toward the address's limit).
            for name in ["getArtists", "stream", "search3", "getCoverArt"] {
                let bad = SubsonicClient(server, auth: [("u", "ann"), ("p", name == "stream" ? "enc:6" : "enc:zz")])
                #expect(try bad.errorCode(name, [("id", "tr-1")]) == 40, "\(name) with bad enc:")
            }

            // Nothing above changed the library or stopped the server, and nothing was an internal error.
            #expect(try fixture.json(["tracks", "--limit", "500"]) as? NSDictionary == before as? NSDictionary)
            _ = try ann.ok("ping")
            let log = server.log.withLock { $0 }
            #expect(!log.contains { $0.contains("internal error") }, "\(log)")
        }
    }
}
