import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// Users, bookmarks, the queue by index, internet radio, the first search and playback reports,
/// through a real server on loopback and curl.
@Suite(.serialized) struct SubsonicUserDataTests {
    @Test func usersAreManagedByTheRulesOfShelfUser() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])

            let me = try #require(try ann.ok("getUser", [("username", "ann")])["user"] as? [String: Any])
            #expect(me["adminRole"] as? Bool == true && me["streamRole"] as? Bool == true && me["jukeboxRole"] as? Bool == true)
            let bobSelf = try #require(try bob.ok("getUser", [("username", "bob")])["user"] as? [String: Any])
            #expect(bobSelf["adminRole"] as? Bool == false && bobSelf["jukeboxRole"] as? Bool == false && bobSelf["shareRole"] as? Bool == true)
            #expect(try bob.errorCode("getUser", [("username", "ann")]) == 50)
            #expect(try bob.errorCode("getUsers") == 50)
            #expect(try bob.errorCode("createUser", [("username", "eve"), ("password", "x")]) == 50)
            #expect(try ann.errorCode("getUser", [("username", "nobody")]) == 70)

            // Created with an enc: password, an email and roles; the password signs in.
            _ = try ann.ok(
                "createUser",
                [
                    ("username", "cy"), ("password", "enc:" + Data("cy-pass".utf8).map { String(format: "%02x", $0) }.joined()),
                    ("email", "cy@example.org"), ("downloadRole", "false"), ("jukeboxRole", "true"), ("maxBitRate", "128"),
                ])
            let cy = SubsonicClient(server, auth: [("u", "cy"), ("p", "cy-pass")])
            let cyUser = try #require(try cy.ok("getUser", [("username", "cy")])["user"] as? [String: Any])
            #expect(cyUser["email"] as? String == "cy@example.org" && cyUser["downloadRole"] as? Bool == false)
            #expect(cyUser["jukeboxRole"] as? Bool == true && cyUser["maxBitRate"] as? Int == 128)
            // A role taken away is enforced: no download, but streaming still works.
            #expect(try cy.errorCode("download", [("id", "tr-1")]) == 50)
            #expect(try cy.raw("stream", [("id", "tr-1"), ("format", "raw")]).status == 200)
            // Roles not sent are the spec's defaults: off, but for settings and streaming.
            #expect(cyUser["playlistRole"] as? Bool == false && cyUser["settingsRole"] as? Bool == true)
            #expect(try cy.errorCode("createPlaylist", [("name", "cy's")]) == 50)
            #expect(try ann.errorCode("createUser", [("username", "CY"), ("password", "x")]) == 0)
            #expect(try ann.errorCode("createUser", [("username", "dee"), ("password", "")]) == 0)
            #expect(try ann.errorCode("createUser", [("username", "dee"), ("password", "x"), ("videoConversionRole", "true")]) == 0)
            let users = try #require((try ann.ok("getUsers")["users"] as? [String: Any])?["user"] as? [[String: Any]])
            #expect(users.compactMap { $0["username"] as? String } == ["ann", "bob", "cy"])

            // updateUser changes only what is sent; the library's CLI sees the same user.
            _ = try ann.ok("updateUser", [("username", "cy"), ("downloadRole", "true"), ("email", "")])
            let updated = try #require(try ann.ok("getUser", [("username", "cy")])["user"] as? [String: Any])
            #expect(updated["downloadRole"] as? Bool == true && updated["jukeboxRole"] as? Bool == true && updated["email"] == nil)
            let listed = try #require((try fixture.json(["user", "list"]) as? [String: Any])?["users"] as? [[String: Any]])
            #expect((listed.first { $0["name"] as? String == "cy" }?["roles"] as? [String])?.contains("jukebox") == true)

            // Passwords: a user changes their own, not another's; an admin changes anyone's.
            _ = try cy.ok("changePassword", [("username", "cy"), ("password", "new-cy")])
            #expect(try cy.errorCode("ping") == 40)
            let cy2 = SubsonicClient(server, auth: [("u", "cy"), ("p", "new-cy")])
            #expect(try cy2.errorCode("changePassword", [("username", "bob"), ("password", "x")]) == 50)
            _ = try ann.ok("changePassword", [("username", "cy"), ("password", "third")])
            _ = try SubsonicClient(server, auth: [("u", "cy"), ("p", "third")]).ok("ping")

            // The last admin stays: neither deleted nor demoted; others go with their data.
            #expect(try ann.errorCode("deleteUser", [("username", "ann")]) == 0)
            #expect(try ann.errorCode("updateUser", [("username", "ann"), ("adminRole", "false")]) == 0)
            _ = try ann.ok("deleteUser", [("username", "cy")])
            #expect(try ann.errorCode("getUser", [("username", "cy")]) == 70)
            #expect(try ann.errorCode("deleteUser", [("username", "cy")]) == 70)

            // Avatars: a PNG of the initials, different for different people, the same every time.
            let annAvatar = try bob.raw("getAvatar", [("username", "ann")])
            #expect(annAvatar.status == 200 && annAvatar.headers["content-type"] == "image/png")
            let image = try ImageCodec.decode(annAvatar.body, maxPixelSize: 1_000)
            #expect(image.width == 128 && image.height == 128)
            // The middle of a lone "A" glyph's bar is white, the corner is the user's colour.
            #expect(Array(image.pixels[0..<3]) != [255, 255, 255])
            #expect(try bob.raw("getAvatar", [("username", "ann")]).body == annAvatar.body)
            #expect(try bob.raw("getAvatar", [("username", "bob")]).body != annAvatar.body)
            #expect(try bob.errorCode("getAvatar", [("username", "nobody")]) == 70)
        }
    }

    @Test func bookmarksQueuesByIndexAndRadio() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            var server = try ServerProcess(library: fixture.library)
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])

            // Bookmarks: one per user and song, moved by saving again, deleted by song.
            #expect(((try ann.ok("getBookmarks")["bookmarks"] as? [String: Any])?["bookmark"]) == nil)
            _ = try ann.ok("createBookmark", [("id", "tr-2"), ("position", "5000"), ("comment", "chapter 2")])
            _ = try ann.ok("createBookmark", [("id", "tr-3"), ("position", "100")])
            _ = try ann.ok("createBookmark", [("id", "tr-2"), ("position", "7000"), ("comment", "chapter 3")])
            _ = try bob.ok("createBookmark", [("id", "tr-1"), ("position", "1")])
            let marks = try #require((try ann.ok("getBookmarks")["bookmarks"] as? [String: Any])?["bookmark"] as? [[String: Any]])
            #expect(marks.count == 2)
            let two = try #require(marks.first { ($0["entry"] as? [String: Any])?["id"] as? String == "tr-2" })
            #expect(two["position"] as? Int == 7_000 && two["comment"] as? String == "chapter 3" && two["username"] as? String == "ann")
            #expect(two["created"] is String && two["changed"] is String)
            #expect(try ann.errorCode("createBookmark", [("id", "tr-2")]) == 10)
            #expect(try ann.errorCode("createBookmark", [("id", "tr-2"), ("position", "-1")]) == 0)
            #expect(try ann.errorCode("createBookmark", [("id", "tr-99"), ("position", "1")]) == 70)
            _ = try ann.ok("deleteBookmark", [("id", "tr-3")])
            #expect(try ann.errorCode("deleteBookmark", [("id", "tr-3")]) == 70)
            #expect(((try bob.ok("getBookmarks")["bookmarks"] as? [String: Any])?["bookmark"] as? [Any])?.count == 1)

            // The queue by index holds a song twice and knows which of the two is playing.
            _ = try ann.ok(
                "savePlayQueueByIndex", [("id", "tr-1"), ("id", "tr-2"), ("id", "tr-1"), ("currentIndex", "2"), ("position", "900"), ("c", "tablet")])
            let byIndex = try #require(try ann.ok("getPlayQueueByIndex")["playQueueByIndex"] as? [String: Any])
            #expect(byIndex["currentIndex"] as? Int == 2 && byIndex["position"] as? Int == 900 && byIndex["changedBy"] as? String == "tablet")
            #expect((byIndex["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tr-1", "tr-2", "tr-1"])
            // The same queue by song names the song.
            #expect((try ann.ok("getPlayQueue")["playQueue"] as? [String: Any])?["current"] as? String == "tr-1")
            #expect(try ann.errorCode("savePlayQueueByIndex", [("id", "tr-1"), ("currentIndex", "1")]) == 0)
            #expect(try ann.errorCode("savePlayQueueByIndex", [("id", "tr-99")]) == 70)
            // A queue saved by song gets the index of the song's first place.
            _ = try bob.ok("savePlayQueue", [("id", "tr-3"), ("id", "tr-4"), ("current", "tr-4")])
            #expect((try bob.ok("getPlayQueueByIndex")["playQueueByIndex"] as? [String: Any])?["currentIndex"] as? Int == 1)

            // Radio: admins keep the list, everyone reads it; only http and https.
            _ = try ann.ok(
                "createInternetRadioStation", [("streamUrl", "https://radio.example/jazz.mp3"), ("name", "Jazz"), ("homepageUrl", "https://radio.example")])
            _ = try ann.ok("createInternetRadioStation", [("streamUrl", "http://radio.example/ambient"), ("name", "ambient")])
            #expect(try bob.errorCode("createInternetRadioStation", [("streamUrl", "https://x.example/"), ("name", "X")]) == 50)
            #expect(try ann.errorCode("createInternetRadioStation", [("streamUrl", "file:///etc/passwd"), ("name", "X")]) == 0)
            #expect(try ann.errorCode("createInternetRadioStation", [("streamUrl", "https://x.example/"), ("name", " ")]) == 0)
            var stations = try #require(
                (try bob.ok("getInternetRadioStations")["internetRadioStations"] as? [String: Any])?["internetRadioStation"] as? [[String: Any]])
            #expect(stations.compactMap { $0["name"] as? String } == ["ambient", "Jazz"])
            let jazz = try #require(stations.first { $0["name"] as? String == "Jazz" })
            #expect(jazz["homePageUrl"] as? String == "https://radio.example" && jazz["streamUrl"] as? String == "https://radio.example/jazz.mp3")
            let jazzID = try #require(jazz["id"] as? String)
            _ = try ann.ok("updateInternetRadioStation", [("id", jazzID), ("streamUrl", "https://radio.example/jazz2.mp3"), ("name", "Jazz 2")])
            #expect(try ann.errorCode("updateInternetRadioStation", [("id", "rs-999"), ("streamUrl", "https://x.example/"), ("name", "X")]) == 70)

            // All of it is the library's: there after a restart.
            server.stop()
            server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let again = SubsonicClient(server)
            stations = try #require(
                (try again.ok("getInternetRadioStations")["internetRadioStations"] as? [String: Any])?["internetRadioStation"] as? [[String: Any]])
            #expect(stations.compactMap { $0["name"] as? String } == ["ambient", "Jazz 2"])
            #expect((try again.ok("getPlayQueueByIndex")["playQueueByIndex"] as? [String: Any])?["currentIndex"] as? Int == 2)
            #expect(((try again.ok("getBookmarks")["bookmarks"] as? [String: Any])?["bookmark"] as? [Any])?.count == 1)
            _ = try again.ok("deleteInternetRadioStation", [("id", jazzID)])
            #expect(try again.errorCode("deleteInternetRadioStation", [("id", jazzID)]) == 70)
        }
    }

    @Test func playbackReportsCountOneListenOnce() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let server = try InProcessServer(directory: fixture.library)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])
            let ann = SubsonicClient(server)
            func plays(_ id: String) throws -> Int? { (try bob.ok("getSong", [("id", id)])["song"] as? [String: Any])?["playCount"] as? Int }
            let song = try #require(try bob.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            let seconds = try #require((try fixture.json(["track", "1"]) as? [String: Any])?["duration"] as? Double)
            // Half the song (the rule's threshold for a song under eight minutes), in milliseconds.
            let half = Int((seconds * 500).rounded(.up))
            func report(_ state: String, _ position: Int, _ extra: [(String, String)] = []) throws {
                _ = try bob.ok("reportPlayback", [("mediaId", "tr-1"), ("mediaType", "song"), ("positionMs", "\(position)"), ("state", state)] + extra)
            }
            try report("starting", 0)
            let playing = ((try ann.ok("getNowPlaying")["nowPlaying"] as? [String: Any])?["entry"] as? [[String: Any]]) ?? []
            #expect(playing.first?["id"] as? String == "tr-1" && playing.first?["username"] as? String == "bob")
            try report("playing", half - 1)
            #expect(try plays("tr-1") == 0)
            try report("playing", half)
            #expect(try plays("tr-1") == 1)
            // The rest of the same listen, and the scrobble the same player sends at the end, count nothing more.
            try report("paused", half + 50)
            try report("playing", half + 60)
            _ = try bob.ok("scrobble", [("id", "tr-1")])
            try report("stopped", half + 100)
            #expect(try plays("tr-1") == 1)
            #expect(((try ann.ok("getNowPlaying")["nowPlaying"] as? [String: Any])?["entry"]) == nil)
            // A new listen counts again; ignoreScrobble never does.
            try report("starting", 0)
            try report("playing", half)
            #expect(try plays("tr-1") == 2)
            try report("starting", 0, [("ignoreScrobble", "true")])
            try report("stopped", half * 2, [("ignoreScrobble", "true")])
            #expect(try plays("tr-1") == 2)
            // A scrobble first, then the reports of that listen: one play.
            try report("starting", 0)
            _ = try bob.ok("scrobble", [("id", "tr-1")])
            try report("stopped", half)
            #expect(try plays("tr-1") == 3)
            #expect(try bob.errorCode("reportPlayback", [("mediaId", "tr-1"), ("mediaType", "song"), ("positionMs", "0"), ("state", "rewinding")]) == 0)
            #expect(try bob.errorCode("reportPlayback", [("mediaId", "tr-1"), ("mediaType", "video"), ("positionMs", "0"), ("state", "playing")]) == 0)
            #expect(
                try bob.errorCode(
                    "reportPlayback", [("mediaId", "tr-1"), ("mediaType", "song"), ("positionMs", "0"), ("state", "playing"), ("playbackRate", "0")]) == 0)

            // The first search (deprecated) answers through the same search.
            let result = try #require(try bob.ok("search", [("any", song["title"] as? String ?? "")])["searchResult"] as? [String: Any])
            #expect((result["totalHits"] as? Int ?? 0) >= 1 && result["offset"] as? Int == 0)
            #expect(((result["match"] as? [[String: Any]]) ?? []).contains { $0["id"] as? String == "tr-1" })
            #expect(try bob.errorCode("search", []) == 10)
        }
    }

    /// A client of the two extensions (Python, the project's `.venv`) keeps a copy in step over 20
    /// rounds of imports, edits and deletes by other processes and draws three jump bars.
    @Test func theExtensionsKeepAClientInStep() async throws {
        try await offCooperativePool {
            let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".venv/bin/python")
            guard FileManager.default.isExecutableFile(atPath: python.path) else {
                print("SubsonicUserDataTests: no .venv (run make subsonic-client); the extension client is skipped")
                return
            }
            let fixture = try ServedLibrary(tracks: 12)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "shelf_sync_client_test.py")
            let work = URL(fileURLWithPath: fixture.library).deletingLastPathComponent().appendingPathComponent("sync-client").path
            let result = try ChildProcess.run(
                python,
                [
                    script.path, "http://127.0.0.1", "\(server.port)", "ann", ServedLibrary.annPassword, ServedLibrary.shelfBinary().path, fixture.library,
                    work, "20",
                ])
            #expect(result.status == 0 && result.stdout.contains("20 rounds in step"), "\(result.stdout)\n\(result.stderr)")
        }
    }

    /// Shares: an unguessable public link that reaches its own songs and nothing else, closes at
    /// once when it expires or is deleted, counts visits, and is refused when sharing is off.
    @Test func sharesReachOnlyTheirOwnSongs() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 6)
            defer { fixture.remove() }
            do {
                let server = try ServerProcess(library: fixture.library)
                defer { server.stop() }
                let ann = SubsonicClient(server)
                let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])
                let created = try #require(
                    ((try bob.ok("createShare", [("id", "tr-2"), ("description", "For <you>")])["shares"] as? [String: Any])?["share"] as? [[String: Any]])?
                        .first)
                let url = try #require(created["url"] as? String)
                #expect(created["username"] as? String == "bob" && created["visitCount"] as? Int == 0 && created["description"] as? String == "For <you>")
                #expect(((created["entry"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == ["tr-2"])
                let path = try #require(URL(string: url)?.path)
                let token = String(path.dropFirst("/share/".count))
                // 128 random bits, base64url without padding.
                #expect(token.count == 22 && token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                let curl = Curl(base: server.base)
                let page = try curl.request("GET", path)
                #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true)
                #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
                #expect(page.headers["x-content-type-options"] == "nosniff" && page.headers["referrer-policy"] == "no-referrer")
                #expect(page.text.contains("For &lt;you&gt;") && !page.text.contains("For <you>"))
                #expect(page.text.contains("\(path)/stream/0") && !page.text.contains("/stream/1"))
                let stream = try curl.request("GET", "\(path)/stream/0")
                #expect(stream.status == 200 && !stream.body.isEmpty)
                #expect(try curl.request("GET", "\(path)/stream/0", headers: ["Range": "bytes=0-9"]).status == 206)
                // Nothing else: another place, another track's ID, another token, the rest of the server.
                for other in [
                    "\(path)/stream/1", "\(path)/stream/-1", "\(path)/stream/tr-3", "\(path)/stream/3", "\(path)/cover/1",
                    "/share/\(token.dropLast())\(token.last == "A" ? "B" : "A")/stream/0", "/share/", "\(path)/../../api/tracks",
                ] {
                    let answer = try curl.request("GET", other)
                    #expect(answer.status == 404 || answer.status == 401, "\(other): \(answer.status)")
                }
                #expect(try curl.request("GET", "/api/tracks").status == 401)
                _ = try curl.request("GET", path)
                let listed = try #require(((try bob.ok("getShares")["shares"] as? [String: Any])?["share"] as? [[String: Any]])?.first)
                #expect(listed["visitCount"] as? Int == 2 && listed["lastVisited"] is String)
                let shareID = try #require(listed["id"] as? String)
                // Per user: ann (an admin) sees and manages it; a plain user does not.
                #expect(((try ann.ok("getShares")["shares"] as? [String: Any])?["share"] as? [Any])?.count == 1)
                #expect(try fixture.shelf(["user", "add", "cy", "--password-stdin"], stdin: "cy-pass\n").status == 0)
                let cy = SubsonicClient(server, auth: [("u", "cy"), ("p", "cy-pass")])
                #expect(((try cy.ok("getShares")["shares"] as? [String: Any])?["share"]) == nil)
                #expect(try cy.errorCode("deleteShare", [("id", shareID)]) == 70)
                // An album share holds its songs; a bad ID shares nothing.
                let album = try #require((try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])?["albumId"] as? String)
                let albumShare = try #require(((try ann.ok("createShare", [("id", album)])["shares"] as? [String: Any])?["share"] as? [[String: Any]])?.first)
                #expect(!((albumShare["entry"] as? [Any]) ?? []).isEmpty)
                #expect(try ann.errorCode("createShare", [("id", "tr-99999")]) == 70)
                #expect(try ann.errorCode("createShare", []) == 10)
                #expect(try ann.errorCode("createShare", [("id", "tr-1"), ("expires", "1000")]) == 0)
                // Expired (by an update into the past) and deleted shares are 404 at once.
                _ = try bob.ok("updateShare", [("id", shareID), ("expires", "1000")])
                #expect(try curl.request("GET", path).status == 404)
                #expect(try curl.request("GET", "\(path)/stream/0").status == 404)
                _ = try bob.ok("updateShare", [("id", shareID), ("expires", "0")])
                #expect(try curl.request("GET", path).status == 200)
                _ = try bob.ok("deleteShare", [("id", shareID)])
                #expect(try curl.request("GET", path).status == 404)
                #expect(try curl.request("GET", "\(path)/stream/0").status == 404)
                #expect(try bob.errorCode("deleteShare", [("id", shareID)]) == 70)
                // A user without the share role may not make one.
                _ = try ann.ok("updateUser", [("username", "cy"), ("shareRole", "false")])
                #expect(try cy.errorCode("createShare", [("id", "tr-1")]) == 50)
            }
            // Sharing turned off: no new links, and the old ones are closed.
            let albumPath: String
            do {
                let server = try ServerProcess(library: fixture.library)
                defer { server.stop() }
                let shares = ((try SubsonicClient(server).ok("getShares")["shares"] as? [String: Any])?["share"] as? [[String: Any]]) ?? []
                let albumURL = try #require(shares.first?["url"] as? String)
                albumPath = try #require(URL(string: albumURL)?.path)
                #expect(try Curl(base: server.base).request("GET", albumPath).status == 200)
            }
            let server = try ServerProcess(library: fixture.library, arguments: ["--sharing", "off"])
            defer { server.stop() }
            #expect(try SubsonicClient(server).errorCode("createShare", [("id", "tr-1")]) == 50)
            #expect(try Curl(base: server.base).request("GET", albumPath).status == 404)
        }
    }
}
