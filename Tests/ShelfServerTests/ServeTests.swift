import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

@Suite(.serialized) struct ServeTests {
    @Test func withoutUsersServeSaysHowToStartAndExits2() async throws {
        try await offCooperativePool {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-nouser-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let result = try ChildProcess.run(ServedLibrary.shelfBinary(), ["--library", root.path, "serve", "--listen", "127.0.0.1:0"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("user add NAME --admin"))
        }
    }

    @Test func sessionsKeysAndForgeryProtection() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary()
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let anonymous = Curl(base: server.base)
            let refused = try anonymous.request("GET", "/api/tracks")
            #expect(refused.status == 401)
            #expect((refused.json as? [String: Any])?["error"] != nil)
            #expect(try anonymous.request("POST", "/api/session", body: Curl.json(["name": "ann", "password": "wrong"])).status == 401)

            let ann = try signedIn(server)
            let cookie = try String(contentsOfFile: ann.cookieJar, encoding: .utf8)
            #expect(cookie.contains("shelf_session"))
            #expect(cookie.contains("#HttpOnly_"))
            let me = try ann.request("GET", "/api/me").json as? [String: Any]
            #expect((me?["user"] as? [String: Any])?["name"] as? String == "ann")

            // A state-changing request with only the cookie is what a cross-site form could send.
            let forged = try ann.request("POST", "/api/playlists", body: Curl.json(["name": "Forged"]))
            #expect(forged.status == 403)
            let made = try ann.request("POST", "/api/playlists", headers: ["X-Shelf-Request": "1"], body: Curl.json(["name": "Mine"]))
            #expect(made.status == 201)

            // API keys: printed once, accepted as a bearer, refused once revoked.
            let key = try fixture.json(["user", "key", "bob"]) as? [String: Any]
            let secret = try #require(key?["key"] as? String)
            let bearer = Curl(base: server.base)
            let asBob = try bearer.request("GET", "/api/me", headers: ["Authorization": "Bearer \(secret)"])
            #expect(asBob.status == 200)
            #expect(((asBob.json as? [String: Any])?["user"] as? [String: Any])?["name"] as? String == "bob")
            // A bearer needs no anti-forgery header: no browser attaches it on its own.
            #expect(try bearer.request("PUT", "/api/tracks/1/star", headers: ["Authorization": "Bearer \(secret)"]).status == 200)
            // Admin-only writes are refused to bob.
            let edit = try bearer.request(
                "POST", "/api/edit", headers: ["Authorization": "Bearer \(secret)"], body: Curl.json(["ids": [1], "set": ["genre": "X"]]))
            #expect(edit.status == 403)
            #expect(try fixture.shelf(["user", "key", "bob", "--revoke", try #require(key?["id"] as? String)]).status == 0)
            #expect(try bearer.request("GET", "/api/me", headers: ["Authorization": "Bearer \(secret)"]).status == 401)

            // Signing out ends the session.
            #expect(try ann.request("DELETE", "/api/session").status == 200)
            #expect(try ann.request("GET", "/api/me").status == 401)
        }
    }

    @Test func wrongPasswordsAreThrottledPerAddress() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let client = Curl(base: server.base)
            for _ in 0..<10 {
                #expect(try client.request("POST", "/api/session", body: Curl.json(["name": "ann", "password": "guess"])).status == 401)
            }
            // The right password does not help once the address used up its failures.
            let limited = try client.request("POST", "/api/session", body: Curl.json(["name": "ann", "password": ServedLibrary.annPassword]))
            #expect(limited.status == 429)
            #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 > 0)
        }
    }

    @Test func everyBrowsingEndpointAnswersWhatTheCommandLinePrints() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary()
            defer { fixture.remove() }
            #expect(try fixture.shelf(["playlist", "create", "Road"]).status == 0)
            #expect(try fixture.shelf(["playlist", "add", "1", "3", "1", "2"]).status == 0)
            #expect(try fixture.shelf(["smart", "create", "All", "--rule", "year:1900..2100"]).status == 0)
            let token = try #require((try fixture.json(["token"]) as? [String: Any])?["token"] as? String)
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let first = try fixture.json(["tracks", "--sort", "title", "--limit", "5"]) as? [String: Any]
            let cursor = try #require(first?["nextCursor"] as? String)
            let pairs: [(String, [String])] = [
                ("/api/tracks?sort=title&limit=5", ["tracks", "--sort", "title", "--limit", "5"]),
                ("/api/tracks?sort=title&limit=5&after=\(cursor)", ["tracks", "--sort", "title", "--limit", "5", "--after", cursor]),
                (
                    "/api/tracks?sort=year:desc&sortTags=off&offset=3&limit=4",
                    ["tracks", "--sort", "year:desc", "--sort-tags", "off", "--offset", "3", "--limit", "4"]
                ),
                ("/api/tracks?filter=year:1990..2100&limit=100", ["tracks", "--filter", "year:1990..2100", "--limit", "100"]),
                ("/api/sections?sort=artist", ["sections", "--sort", "artist"]),
                ("/api/snapshot?sort=album", ["snapshot", "--sort", "album"]),
                ("/api/tracks/2", ["track", "2"]),
                ("/api/search?q=the&limit=5", ["search", "the", "--limit", "5"]),
                ("/api/albums?limit=50", ["albums", "--limit", "50"]),
                ("/api/artists?by=albumArtist", ["artists", "--by", "albumArtist"]),
                ("/api/composers", ["composers"]),
                ("/api/genres?sort=name:desc", ["genres", "--sort", "name:desc"]),
                ("/api/playlists", ["playlist", "list"]),
                ("/api/playlists/1", ["playlist", "show", "1"]),
                ("/api/playlists/1/page?sort=title", ["playlist", "page", "1", "--sort", "title"]),
                ("/api/smart/2?limit=3", ["smart", "show", "2", "--limit", "3"]),
                ("/api/token", ["token"]),
                ("/api/changes?since=\(token)", ["changes", "--since", token]),
                ("/api/info", ["info"]),
            ]
            for (path, arguments) in pairs {
                let answer = try ann.request("GET", path)
                #expect(answer.status == 200, "\(path): \(answer.text)")
                #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
                var expected = try fixture.json(arguments)
                var got = answer.json
                if path == "/api/info" {
                    // The size on disk moves as the server writes its WAL; the rest must agree.
                    expected = (expected as? [String: Any])?.filter { $0.key != "bytesOnDisk" } as Any
                    got = (got as? [String: Any])?.filter { $0.key != "bytesOnDisk" }
                }
                #expect(sameJSON(got, expected), "\(path) differs from shelf \(arguments.joined(separator: " "))")
            }
            // The drill-downs: an album's tracks, an artist's albums.
            let albums = try #require((try fixture.json(["albums"]) as? [String: Any])?["items"] as? [[String: Any]])
            let album = try #require(albums.first?["id"] as? Int)
            #expect(sameJSON(try ann.request("GET", "/api/albums/\(album)/tracks").json, try fixture.json(["tracks", "--album", "\(album)"])))
            let artists = try #require((try fixture.json(["artists"]) as? [String: Any])?["items"] as? [[String: Any]])
            let artist = try #require(artists.first?["id"] as? Int)
            #expect(sameJSON(try ann.request("GET", "/api/artists/\(artist)/albums").json, try fixture.json(["albums", "--artist", "\(artist)"])))
            // The anchor of the first section lands on its first row.
            let sections = try #require((try fixture.json(["sections"]) as? [String: Any])?["sections"] as? [[String: Any]])
            let section = try #require(sections.last)
            let anchor = try ann.request(
                "GET", "/api/anchor?section=\(try #require((section["name"] as? String)?.addingPercentEncoding(withAllowedCharacters: .alphanumerics)))")
            #expect((anchor.json as? [String: Any])?["index"] as? Int == section["firstIndex"] as? Int)
            #expect(try ann.request("GET", "/api/anchor?section=Q&filter=title:zzzzzz").status == 404)
            // Mistakes name themselves.
            let badSort = try ann.request("GET", "/api/tracks?sort=colour")
            #expect(badSort.status == 400)
            #expect(badSort.text.contains("colour"))
            let badFilter = try ann.request("GET", "/api/tracks?filter=year:abc")
            #expect(badFilter.status == 400)
            #expect(try ann.request("GET", "/api/tracks?limt=5").status == 400)
            #expect(try ann.request("GET", "/api/tracks/999999").status == 404)
            #expect(try ann.request("DELETE", "/api/token").status == 405)
            #expect(try ann.request("GET", "/api/changes?since=shelf1.\(UUID().uuidString).3").status == 410)
        }
    }

    @Test func writesThroughTheAPIReachTheStoreAndItsHistory() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 6)
            defer { fixture.remove() }
            let token = try #require((try fixture.json(["token"]) as? [String: Any])?["token"] as? String)
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            let write = ["X-Shelf-Request": "1"]
            #expect(try ann.request("PUT", "/api/tracks/1/rating", headers: write, body: Curl.json(["rating": 80])).status == 200)
            #expect(try bob.request("PUT", "/api/tracks/1/rating", headers: write, body: Curl.json(["rating": 20])).status == 200)
            #expect(try bob.request("PUT", "/api/tracks/2/star", headers: write).status == 200)
            #expect(try bob.request("POST", "/api/tracks/2/scrobble", headers: write).status == 200)
            #expect(try bob.request("PUT", "/api/tracks/1/rating", headers: write, body: Curl.json(["rating": 101])).status == 400)
            // ann owns the library: her rating is the track's; bob's stays his own.
            let track = try fixture.json(["track", "1"]) as? [String: Any]
            #expect(track?["rating"] as? Int == 80)
            let mine = try bob.request("GET", "/api/me/tracks?ids=1,2").json as? [String: Any]
            let tracks = mine?["tracks"] as? [String: [String: Any]]
            #expect(tracks?["1"]?["rating"] as? Int == 20)
            #expect(tracks?["2"]?["playCount"] as? Int == 1)
            #expect(tracks?["2"]?["starred"] is String)
            let starred = try bob.request("GET", "/api/me/starred").json as? [String: Any]
            #expect(((starred?["items"] as? [[String: Any]])?.map { $0["id"] as? Int }) == [2])
            // An edit from the API writes the file, with the command line's report.
            let edited = try ann.request("POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "set": ["genre": "Served Jazz"]]))
            #expect(edited.status == 200)
            #expect(sameJSON((edited.json as? [String: Any])?["updated"], [3]))
            #expect((try fixture.json(["draft", "3"]) as? [String: Any]).flatMap { ($0["track"] as? [String: Any])?["genre"] as? String } == "Served Jazz")
            // A new picture in base64, into the file and the library; then removed; bad bytes are a 400.
            let red = DecodedImage(
                width: 48, height: 48, bytesPerRow: 48 * 4,
                pixels: [UInt8](repeating: 0, count: 48 * 48 * 4).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 })
            let png = try ImageCodec.encode(red, as: .png)
            let pictured = try ann.request("POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "picture": png.base64EncodedString()]))
            #expect(pictured.status == 200 && sameJSON((pictured.json as? [String: Any])?["updated"], [3]), "\(pictured.text)")
            let artworkID = try #require((try ann.request("GET", "/api/tracks/3").json as? [String: Any])?["artworkID"] as? String)
            let served = try ann.request("GET", "/api/artwork/\(artworkID)?size=48&format=png")
            let decoded = try ImageCodec.decode(served.body, maxPixelSize: 48)
            #expect(decoded.width == 48 && decoded.pixels[0] > 200 && decoded.pixels[1] < 50, "the served picture is the red one")
            #expect(try ann.request("POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "picture": "not base64!"])).status == 400)
            #expect(
                try ann.request("POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "picture": Data("GIF89a".utf8).base64EncodedString()])).status
                    == 400)
            #expect(
                try ann.request(
                    "POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "picture": png.base64EncodedString(), "removePicture": true])
                ).status == 400)
            let removed = try ann.request("POST", "/api/edit", headers: write, body: Curl.json(["ids": [3], "removePicture": true]))
            #expect(removed.status == 200)
            #expect((try ann.request("GET", "/api/tracks/3").json as? [String: Any])?["artworkID"] as? String == nil)
            // Playlists: bob's own, private to him.
            let created = try bob.request("POST", "/api/playlists", headers: write, body: Curl.json(["name": "Bob's"]))
            let playlist = try #require((created.json as? [String: Any])?["id"] as? Int)
            #expect(try bob.request("POST", "/api/playlists/\(playlist)/items", headers: write, body: Curl.json(["tracks": [1, 2, 3]])).status == 200)
            #expect(try bob.request("POST", "/api/playlists/\(playlist)/move", headers: write, body: Curl.json(["positions": [3], "to": 1])).status == 200)
            let shown = try bob.request("GET", "/api/playlists/\(playlist)").json as? [String: Any]
            #expect(((shown?["items"] as? [[String: Any]])?.compactMap { ($0["track"] as? [String: Any])?["id"] as? Int }) == [3, 1, 2])
            #expect(try bob.request("POST", "/api/playlists/\(playlist)/remove", headers: write, body: Curl.json(["positions": [9]])).status == 400)
            // Every write is in the change log the command line reads.
            let changes = try fixture.json(["changes", "--since", token]) as? [String: Any]
            let entries = try #require(changes?["changes"] as? [[String: Any]])
            let groups = entries.flatMap { (($0["tracks"] as? [String: Any])?["updated"] as? [[String: Any]]) ?? [] }.flatMap {
                ($0["groups"] as? [String]) ?? []
            }
            #expect(groups.contains("userData"))
            #expect(groups.contains("playStats"))
            #expect(groups.contains("metadata"))
        }
    }

    @Test func artworkIsServedAtStepSizesAndIsImmutable() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let track = try fixture.json(["track", "1"]) as? [String: Any]
            let artworkID = try #require(track?["artworkID"] as? String)
            let picture = try ann.request("GET", "/api/artwork/\(artworkID)?size=300")
            #expect(picture.status == 200)
            #expect(picture.headers["content-type"] == "image/jpeg")
            #expect(picture.headers["cache-control"] == "public, max-age=31536000, immutable")
            let size = try ImageCodec.dimensions(of: picture.body)
            #expect(max(size.width, size.height) <= 320)
            let etag = try #require(picture.headers["etag"])
            #expect(try ann.request("GET", "/api/artwork/\(artworkID)?size=300", headers: ["If-None-Match": etag]).status == 304)
            // 300 and 310 round to the same step, so they share a cache entry and an ETag.
            #expect(try ann.request("GET", "/api/artwork/\(artworkID)?size=310").headers["etag"] == etag)
            let tiny = try ann.request("GET", "/api/artwork/\(artworkID)?size=1&format=png")
            #expect(tiny.body.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
            #expect(max(try ImageCodec.dimensions(of: tiny.body).width, try ImageCodec.dimensions(of: tiny.body).height) <= 16)
            let throughTrack = try ann.request("GET", "/api/tracks/1/artwork?size=64")
            #expect(throughTrack.status == 200)
            #expect(throughTrack.headers["cache-control"] == "private, max-age=60")
            #expect(try ann.request("GET", "/api/artwork/\(UUID().uuidString)?size=64").status == 404)
            #expect(try ann.request("GET", "/api/artwork/not-an-id").status == 400)
            #expect(try ann.request("GET", "/api/artwork/\(artworkID)?format=gif").status == 400)
        }
    }

    @Test func streamsServeRangesFromTheFile() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let path = try #require((try fixture.json(["track", "1"]) as? [String: Any])?["path"] as? String)
            let file = try Data(contentsOf: URL(fileURLWithPath: path))
            let whole = try ann.request("GET", "/api/stream/1")
            #expect(whole.status == 200)
            #expect(whole.body == file)
            #expect(whole.headers["accept-ranges"] == "bytes")
            #expect(whole.headers["etag"] != nil && whole.headers["last-modified"] != nil)
            #expect(whole.headers["content-type"]?.hasPrefix("audio/") == true)
            let first = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=0-0"])
            #expect(first.status == 206)
            #expect(first.body == file.prefix(1))
            #expect(first.headers["content-range"] == "bytes 0-0/\(file.count)")
            let middle = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=100-199"])
            #expect(middle.status == 206)
            #expect(middle.body == file[100..<200])
            let suffix = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=-50"])
            #expect(suffix.body == file.suffix(50))
            let open = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=\(file.count - 10)-"])
            #expect(open.body == file.suffix(10))
            let past = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=\(file.count)-"])
            #expect(past.status == 416)
            #expect(past.headers["content-range"] == "bytes */\(file.count)")
            // Several ranges are answered with the whole file, which HTTP allows.
            let several = try ann.request("GET", "/api/stream/1", headers: ["Range": "bytes=0-1,5-6"])
            #expect(several.status == 200)
            #expect(several.body == file)
            let head = try ann.request("HEAD", "/api/stream/1")
            #expect(head.status == 200)
            #expect(head.headers["content-length"] == "\(file.count)")
            // No body follows a HEAD: on one connection, the next response starts right after its head.
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let connection = try RawConnection(port: server.port)
            let auth = "Host: x\r\nAuthorization: Bearer \(key)\r\n"
            try connection.send("HEAD /api/stream/1 HTTP/1.1\r\n\(auth)\r\nGET /api/token HTTP/1.1\r\n\(auth)Connection: close\r\n\r\n")
            let both = String(decoding: connection.read(), as: UTF8.self)
            let heads = both.components(separatedBy: "\r\n\r\n")
            #expect(heads.count >= 2 && heads[1].hasPrefix("HTTP/1.1 200"))
            #expect(try ann.request("GET", "/api/stream/424242").status == 404)
            #expect(try ann.request("GET", "/api/stream/1?format=wma").status == 400)
        }
    }

    @Test func transcodesStreamAndDieWithTheirClient() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            // Ten minutes of audio, so a transcode outlives its client.
            let long = fixture.root.appendingPathComponent("music/long.flac").path
            let made = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=600", "-c:a", "flac", long])
            try #require(made.status == 0, "\(made.stderr)")
            #expect(try fixture.shelf(["import", long]).status == 0)
            let server = try ServerProcess(library: fixture.library, arguments: ["--max-transcodes", "1"])
            defer { server.stop() }
            let ann = try signedIn(server)
            let mp3 = try ann.request("GET", "/api/stream/1?format=mp3&bitRate=96")
            #expect(mp3.status == 200)
            #expect(mp3.headers["accept-ranges"] == "none")
            #expect(mp3.headers["content-type"] == "audio/mpeg")
            #expect(mp3.body.count > 1000)
            #expect(mp3.body.prefix(3) == Data("ID3".utf8) || mp3.body.first == 0xFF)
            let opus = try ann.request("GET", "/api/stream/2?format=opus&timeOffset=1")
            #expect(opus.body.prefix(4) == Data("OggS".utf8))

            // A client that starts the long transcode and stops reading holds the only slot…
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let holder = try RawConnection(port: server.port, receiveBuffer: 4096)
            try holder.send("GET /api/stream/3?format=mp3&bitRate=320 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n")
            let (head, _) = holder.readHead()
            #expect(head.hasPrefix("HTTP/1.1 200"))
            let busy = try ann.request("GET", "/api/stream/1?format=mp3")
            #expect(busy.status == 429)
            #expect(busy.headers["retry-after"] != nil)
            #expect(ffmpegChildren(of: server.process.processIdentifier) == 1)
            // …and when it hangs up, its ffmpeg is killed and reaped, and the slot is free again.
            holder.close()
            #expect(waitUntil { ffmpegChildren(of: server.process.processIdentifier) == 0 })
            #expect(waitUntil { (try? ann.request("GET", "/api/stream/2?format=flac").status) == 200 })
        }
    }

    @Test func hostileRequestsGetTheirStatusAndTheServerGoesOn() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            func raw(_ request: String) throws -> String {
                let connection = try RawConnection(port: server.port)
                try connection.send(request)
                return connection.readHead().head
            }
            #expect(try raw("GET /api/tracks?filter=%zz HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 400"))
            #expect(try raw("GET /api/tracks?filter=%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 400"))
            #expect(try raw("GET /api/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 400"))
            #expect(try raw("GET /api/tracks%00 HTTP/1.1\r\nHost: x\r\n\r\n").hasPrefix("HTTP/1.1 400"))
            let manyHeaders = (0..<1000).map { "X-Header-\($0): \(String(repeating: "v", count: 40))\r\n" }.joined()
            let flooded = try raw("GET /api/tracks HTTP/1.1\r\nHost: x\r\n\(manyHeaders)\r\n")
            #expect(flooded.hasPrefix("HTTP/1.1 4"))
            #expect(try ann.request("GET", "/api/tracks?limit=99999999999").status == 400)
            #expect(try ann.request("GET", "/api/tracks?offset=-1").status == 400)
            let big = try ann.request("POST", "/api/playlists", headers: ["X-Shelf-Request": "1"], body: Data(count: 2 << 20))
            #expect(big.status == 413)
            #expect(try ann.request("POST", "/api/playlists", headers: ["X-Shelf-Request": "1"], body: Data("{nope".utf8)).status == 400)
            // A request trickled a byte at a time holds no one up: another is answered in the middle of it.
            let trickle = try RawConnection(port: server.port)
            let request = Array("GET /api/token HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n\r\n".utf8)
            for byte in request.prefix(20) { try trickle.send(Data([byte])) }
            #expect(try ann.request("GET", "/api/token").status == 200)
            for byte in request.dropFirst(20) { try trickle.send(Data([byte])) }
            #expect(trickle.readHead().head.hasPrefix("HTTP/1.1 401"))
            // Each of them left a log line with its status, and none leaked a credential.
            #expect(server.waitForLine { $0.hasPrefix("GET /api/tracks?limit=99999999999 400") } != nil)
            #expect(server.waitForLine { $0.hasPrefix("POST /api/playlists 413") } != nil)
            #expect(!server.log.contains { $0.contains(ServedLibrary.annPassword) })
            #expect(try ann.request("GET", "/api/tracks").status == 200)
        }
    }

    @Test func eventsResumeFromTheLastEventIDWithNothingLostOrRepeated() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let start = try #require((try fixture.json(["token"]) as? [String: Any])?["token"] as? String)

            // A first connection sees a write made by another process (the command line).
            let first = try EventClient(port: server.port, key: key, lastEventID: nil)
            #expect(first.next(named: "ready") != nil)
            #expect(try fixture.shelf(["playlist", "create", "One"]).status == 0)
            let seen = try #require(first.next(named: "change"))
            first.close()
            // Writes while no one is connected…
            #expect(try fixture.shelf(["playlist", "create", "Two"]).status == 0)
            #expect(try fixture.shelf(["playlist", "add", "1", "2", "3"]).status == 0)
            #expect(try fixture.shelf(["delete", "4"]).status == 0)
            // …are exactly what a reconnect with Last-Event-ID gets, in order, each once.
            let missed = try #require((try fixture.json(["changes", "--since", seen.id]) as? [String: Any])?["changes"] as? [[String: Any]])
            #expect(missed.count == 3)
            let second = try EventClient(port: server.port, key: key, lastEventID: seen.id)
            #expect(second.next(named: "ready") != nil)
            var got: [String] = []
            for _ in missed { got.append(try #require(second.next(named: "change")).id) }
            #expect(got == missed.compactMap { $0["token"] as? String })
            #expect(sameJSON(try JSONSerialization.jsonObject(with: Data(try #require(second.last?.data).utf8)), missed.last))
            second.close()
            // The first event seen was the first change after the starting token.
            let all = try #require((try fixture.json(["changes", "--since", start]) as? [String: Any])?["changes"] as? [[String: Any]])
            #expect(all.first?["token"] as? String == seen.id)
            // A token from another store gets one tokenExpired event, then the stream goes on.
            let stale = try EventClient(port: server.port, key: key, lastEventID: "shelf1.\(UUID().uuidString).7")
            #expect(stale.next(named: "tokenExpired") != nil)
            #expect(try fixture.shelf(["playlist", "create", "Three"]).status == 0)
            #expect(stale.next(named: "change") != nil)
            stale.close()
        }
    }

    @Test func aReaderThatStopsHoldsNoOneElse() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(
                library: fixture.library, environment: ["SHELF_EVENT_BUFFER_BYTES": "4096", "SHELF_EVENT_STALL_MS": "1000"])
            defer { server.stop() }
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let stuck = try RawConnection(port: server.port, receiveBuffer: 2048)
            try stuck.send("GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n")
            let reader = try EventClient(port: server.port, key: key, lastEventID: nil)
            #expect(reader.next(named: "ready") != nil)
            // Hundreds of transactions, one request each on one connection, while one client reads
            // nothing at all. A scrobble always changes the play count, so each is a change set.
            let rounds = 600
            let urls = (0..<rounds).map { "\(server.base)/api/tracks/\($0 % 2 + 1)/scrobble" }
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-sS", "-X", "POST", "-H", "Authorization: Bearer \(key)"] + urls
            curl.standardOutput = FileHandle.nullDevice
            try curl.run()
            // The reader keeps reading while the writes go on, and gets every one of them.
            var changes = 0
            while changes < rounds, reader.next(named: "change") != nil { changes += 1 }
            curl.waitUntilExit()
            #expect(curl.terminationStatus == 0)
            #expect(changes == rounds)
            reader.close()
            stuck.close()
        }
    }

    @Test func sigtermLetsInFlightRequestsFinishAndExitsZero() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let long = fixture.root.appendingPathComponent("music/long.wav").path
            let made = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/ffmpeg"), ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=120", long])
            try #require(made.status == 0)
            #expect(try fixture.shelf(["import", long]).status == 0)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: long)[.size] as? Int)
            let server = try ServerProcess(library: fixture.library)
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let events = try EventClient(port: server.port, key: key, lastEventID: nil)
            #expect(events.next(named: "ready") != nil)
            // A download in flight: its head has arrived, its body has not been read.
            let download = try RawConnection(port: server.port, receiveBuffer: 4096)
            try download.send("GET /api/stream/3 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n\r\n")
            let (head, rest) = download.readHead()
            #expect(head.hasPrefix("HTTP/1.1 200"))
            kill(server.process.processIdentifier, SIGTERM)
            #expect(server.waitForLine { $0 == "shelf: stopping" } != nil)
            let body = rest + download.read()
            #expect(body.count == size)
            // The event stream ended rather than being cut.
            #expect(events.waitForEnd())
            #expect(server.stop() == 0)
            #expect(server.log.contains("shelf: stopped"))
        }
    }

    @Test func aServerKilledDuringWritesLosesNoAnsweredWrite() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 3)
            defer { fixture.remove() }
            let start = try #require((try fixture.json(["token"]) as? [String: Any])?["token"] as? String)
            var server = try ServerProcess(library: fixture.library)
            let key = try #require((try fixture.json(["user", "key", "bob"]) as? [String: Any])?["key"] as? String)
            // Writes over one connection; the server is killed once a known number were answered.
            let connection = try RawConnection(port: server.port)
            var answered = 0
            for round in 0..<40 {
                try connection.send(
                    "POST /api/tracks/\(round % 3 + 1)/scrobble HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Length: 0\r\n\r\n")
                let reply = connection.read { data in
                    guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return false }
                    let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
                    let length =
                        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                    return data.count >= end.upperBound + length
                }
                if String(decoding: reply.prefix(12), as: UTF8.self) == "HTTP/1.1 200" { answered += 1 }
                if round == 24 {
                    // In the middle of the next write, as far as the server knows.
                    try connection.send("POST /api/tracks/1/scrobble HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Length: 0\r\n\r\n")
                    server.stop(signal: SIGKILL)
                    break
                }
            }
            #expect(answered == 25)
            // Every answered write is in the history; the store opens and the server starts again.
            let changes = try #require((try fixture.json(["changes", "--since", start]) as? [String: Any])?["changes"] as? [[String: Any]])
            #expect(changes.count >= answered)
            server = try ServerProcess(library: fixture.library)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            let plays = try bob.request("GET", "/api/me/tracks?ids=1,2,3").json as? [String: Any]
            let total = ((plays?["tracks"] as? [String: [String: Any]]) ?? [:]).values.compactMap { $0["playCount"] as? Int }.reduce(0, +)
            #expect(total >= answered)
            #expect(server.stop() == 0)
        }
    }
}

/// How many `ffmpeg` processes are children of `pid` (from /proc, no tools needed).
func ffmpegChildren(of pid: Int32) -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.filter { entry in
        guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { return false }
        // pid (comm) state ppid …
        guard let close = stat.lastIndex(of: ")") else { return false }
        let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return name == "ffmpeg" && fields.count > 1 && Int32(fields[1]) == pid
    }.count
}

/// Polls `condition` until it holds, for up to a minute: waits for a state the server reaches on
/// its own (a process reaped), never a fixed delay that could race.
func waitUntil(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A server-sent events reader over a raw connection.
final class EventClient {
    struct Event {
        var id: String
        var name: String
        var data: String
    }

    private let connection: RawConnection
    private var buffer = Data()
    private(set) var last: Event?
    private var ended = false

    init(port: UInt16, key: String, lastEventID: String?) throws {
        connection = try RawConnection(port: port)
        var request = "GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(key)\r\n"
        if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
        try connection.send(request + "\r\n")
        let (head, rest) = connection.readHead()
        guard head.hasPrefix("HTTP/1.1 200") else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: head]) }
        raw = rest
        dechunk()
    }

    /// The next event (skipping comments); nil when the stream ends.
    func next() -> Event? {
        // Keep-alive comments arrive every 15 s, so a stream that never sends the event would
        // otherwise keep this waiting forever: a minute is the bound of a failed test.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let event = parse() { return event }
            if ended { return nil }
            let more = connection.read { !$0.isEmpty }
            if more.isEmpty {
                ended = true
            } else {
                raw += more
                dechunk()
            }
        }
        return nil
    }

    /// The next event called `name`, skipping others.
    func next(named name: String) -> Event? {
        while let event = next() {
            if event.name == name { return event }
        }
        return nil
    }

    /// Reads until the server ends the stream; true when it ended with the last chunk (a clean
    /// end), not a cut connection.
    func waitForEnd() -> Bool {
        while next() != nil {}
        return sawLastChunk
    }

    private var raw = Data()
    private var sawLastChunk = false

    /// Moves whole chunks' payloads from `raw` to `buffer` (the body is chunked).
    private func dechunk() {
        let crlf = Data("\r\n".utf8)
        while let line = raw.range(of: crlf) {
            let sizeText = String(decoding: raw[raw.startIndex..<line.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return }
            let start = line.upperBound
            guard raw.count - (start - raw.startIndex) >= size + 2 else { return }
            if size == 0 { sawLastChunk = true }
            buffer += raw[start..<start + size]
            raw = Data(raw[(start + size + 2)...])
        }
    }

    private func parse() -> Event? {
        while let end = buffer.range(of: Data("\n\n".utf8)) {
            let block = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer = Data(buffer[end.upperBound...])
            var event = Event(id: "", name: "message", data: "")
            var any = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: true) {
                if line.hasPrefix("id: ") {
                    event.id = String(line.dropFirst(4))
                    any = true
                }
                if line.hasPrefix("event: ") {
                    event.name = String(line.dropFirst(7))
                    any = true
                }
                if line.hasPrefix("data: ") {
                    event.data = String(line.dropFirst(6))
                    any = true
                }
            }
            if any {
                last = event
                return event
            }
        }
        return nil
    }

    func close() { connection.close() }
}
