import Foundation
import ShelfTestSupport
import Testing

/// The classes of fault Navidrome 0.64 fixed late, tried on Shelf over real connections: values
/// that reach SQL, another user's playlists and shares by ID, the sign-in throttle against many
/// names and forged forwarded headers from one address.
@Suite struct SecurityTests {
    static let write = ["X-Shelf-Request": "1"]

    /// Injection payloads in every place a client's text reaches a query: they are values, so they
    /// match nothing (or what they literally say), change no row and never fail the statement.
    @Test func textThatLooksLikeSQLIsOnlyEverAValue() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 6)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let payloads = [
                "' OR '1'='1", "x\") OR 1=1 --", "'; DROP TABLE track; --", "%' UNION SELECT password FROM user --", "composer' OR 1=1 OR 'a'='",
                "\\' OR 1 --", "1) OR (1=1",
            ]
            let songs = { try (ann.ok("search3", [("query", ""), ("songCount", "500")])["searchResult3"] as? [String: Any])?["song"] as? [Any] }
            let before = try songs()?.count ?? 0
            #expect(before == 6)
            for payload in payloads {
                let found = try ann.ok("search3", [("query", payload)])["searchResult3"] as? [String: Any]
                let hits = (found?["song"] as? [Any]) ?? []
                #expect(hits.count == 0, "\(payload)")
                _ = try ann.ok("getArtists", [("musicFolderId", "1")])
                let byGenre = try ann.json("getAlbumList2", [("type", "byGenre"), ("genre", payload)])
                #expect(byGenre["status"] as? String == "ok", "\(payload): \(byGenre)")
                let albums = ((byGenre["albumList2"] as? [String: Any])?["album"] as? [Any]) ?? []
                #expect(albums.count == 0, "\(payload)")
                // The CLI's filter language and the native list: a quoted value is text.
                let quoted = "\"" + payload.replacingOccurrences(of: "\"", with: "") + "\""
                let listed = try fixture.shelf(["tracks", "--filter", "artist:\(quoted)", "--json"])
                #expect(listed.status == 0, "\(payload): \(listed.stderr)")
                let items = (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["items"] as? [Any]
                #expect(items?.count == 0, "\(payload): \(listed.stdout)")
                // The role parameter that carried Navidrome's injection: a role no one has lists no one.
                let role = try fixture.shelf(["artists", "--role", payload, "--json"])
                let credited = (try? JSONSerialization.jsonObject(with: Data(role.stdout.utf8)) as? [String: Any])?["items"] as? [Any]
                #expect(role.status != 0 || credited?.count == 0, "\(payload): \(role.stdout)")
            }
            let curl = try signedIn(server)
            for payload in payloads {
                var allowed = CharacterSet.urlQueryAllowed
                allowed.remove(charactersIn: "&+=?#")
                let encoded = payload.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
                for path in ["/api/tracks?filter=\(encoded)", "/api/search?q=\(encoded)", "/api/artists?role=\(encoded)", "/api/albums?sort=\(encoded)"] {
                    let answer = try curl.request("GET", path)
                    #expect(answer.status == 200 || answer.status == 400, "\(path): \(answer.status)")
                    if answer.status == 200, path.hasPrefix("/api/tracks") {
                        #expect(((answer.json as? [String: Any])?["items"] as? [Any])?.count == 0, "\(path)")
                    }
                }
            }
            // Nothing was changed or dropped.
            #expect(try songs()?.count == before)
            #expect(try fixture.shelf(["info"]).status == 0)
        }
    }

    /// A user reaches only their own playlists and shares by ID (public playlists to read): the
    /// Subsonic and native calls on another's refuse, and leave the object as it was.
    @Test func anotherUsersPlaylistsAndSharesCannotBeReadOrChangedByID() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            try #require(try fixture.shelf(["user", "add", "cat", "--password-stdin"], stdin: "cat-pass-123\n").status == 0)
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])
            let cat = SubsonicClient(server, auth: [("u", "cat"), ("p", "cat-pass-123")])
            let song = try #require(
                ((try bob.ok("getRandomSongs", [("size", "1")])["randomSongs"] as? [String: Any])?["song"] as? [[String: Any]])?.first?["id"] as? String)
            let playlist = try #require(
                (try bob.ok("createPlaylist", [("name", "Bob's own"), ("songId", song)])["playlist"] as? [String: Any])?["id"] as? String)
            let share = try #require(
                ((try bob.ok("createShare", [("id", song), ("description", "for friends")])["shares"] as? [String: Any])?["share"] as? [[String: Any]])?.first?[
                    "id"] as? String)

            #expect([50, 70].contains(try cat.errorCode("getPlaylist", [("id", playlist)])), "a private playlist is not read by another")
            #expect([50, 70].contains(try cat.errorCode("updatePlaylist", [("playlistId", playlist), ("name", "Cat's now")])))
            #expect([50, 70].contains(try cat.errorCode("updatePlaylist", [("playlistId", playlist), ("songIdToAdd", song)])))
            #expect([50, 70].contains(try cat.errorCode("deletePlaylist", [("id", playlist)])))
            #expect([50, 70].contains(try cat.errorCode("updateShare", [("id", share), ("description", "mine")])))
            #expect([50, 70].contains(try cat.errorCode("deleteShare", [("id", share)])))
            let catsShares = ((try cat.ok("getShares")["shares"] as? [String: Any])?["share"] as? [Any]) ?? []
            #expect(catsShares.isEmpty, "another's shares are not listed")
            let catsPlaylists = ((try cat.ok("getPlaylists")["playlists"] as? [String: Any])?["playlist"] as? [[String: Any]]) ?? []
            #expect(!catsPlaylists.contains { $0["id"] as? String == playlist })

            let native = try signedIn(server, "cat", "cat-pass-123")
            let number = playlist.split(separator: "-").last.map(String.init) ?? playlist
            for (method, path, body) in [
                ("GET", "/api/playlists/\(number)", nil), ("DELETE", "/api/playlists/\(number)", nil),
                ("POST", "/api/playlists/\(number)/rename", Curl.json(["name": "Cat's"])),
                ("POST", "/api/playlists/\(number)/comment", Curl.json(["comment": "cat was here"])),
                ("POST", "/api/playlists/\(number)/items", Curl.json(["ids": [1]])),
            ] as [(String, String, Data?)] {
                let answer = try native.request(method, path, headers: Self.write, body: body)
                #expect([403, 404].contains(answer.status), "\(method) \(path): \(answer.status)")
            }

            // Bob's playlist and share are as he left them.
            let kept = try #require(try bob.ok("getPlaylist", [("id", playlist)])["playlist"] as? [String: Any])
            #expect(kept["name"] as? String == "Bob's own" && kept["songCount"] as? Int == 1 && (kept["comment"] as? String ?? "").isEmpty)
            let shares = ((try bob.ok("getShares")["shares"] as? [String: Any])?["share"] as? [[String: Any]]) ?? []
            #expect(shares.count == 1 && shares.first?["description"] as? String == "for friends")
        }
    }

    /// The throttle counts failures per address, whatever the name tried, and a forwarded header
    /// from a peer that is not a trusted proxy names no other address: twelve names, each from a
    /// different claimed address, have at most ten checked, and then the right password waits too.
    @Test func manyNamesAndForgedForwardedHeadersShareOneAddressLimit() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            var statuses: [Int] = []
            for n in 0..<12 {
                let forged = [
                    "X-Forwarded-For": "203.0.113.\(n)", "X-Real-IP": "198.51.100.\(n)", "Forwarded": "for=192.0.2.\(n);proto=https",
                ]
                let client = SubsonicClient(server, auth: [("u", "user\(n)"), ("p", "wrong-\(n)")])
                statuses.append(try client.raw("ping", headers: forged).status)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(statuses.suffix(2).allSatisfy { $0 == 429 }, "\(statuses)")
            let right = try SubsonicClient(server).raw("ping", headers: ["X-Forwarded-For": "203.0.113.99"])
            #expect(right.status == 429, "the address is limited, whatever header it sends")
            // The native sign-in shares the address's count.
            let native = try Curl(base: server.base).request(
                "POST", "/api/session", headers: ["X-Forwarded-For": "203.0.113.200"],
                body: Curl.json(["name": "ann", "password": ServedLibrary.annPassword]))
            #expect(native.status == 429)
        }
    }
}
