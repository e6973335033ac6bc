import Foundation
import ShelfTestSupport
import Testing

/// End-to-end tests of the built `shelf` and `shelf-bench` executables: exit codes, the JSON
/// shapes scripts depend on, and one-line errors on stderr.
@Suite struct ShelfCommandTests {
    let products = ChildProcess.productsDirectory()

    func shelf(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), arguments, environment: environment)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A library of `tracks` generated tracks in a fresh directory.
    func generated(_ tracks: Int) throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        let result = try ChildProcess.run(
            products.appendingPathComponent("shelf-bench"),
            ["generate", "--tracks", String(tracks), "--seed", "5", "--library", dir.url.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try json(result.stdout)["tracks"] as? Int == tracks)
        return dir
    }

    @Test func infoOnANewLibrary() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let result = try shelf(["--library", dir.path("lib").path, "info", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let info = try json(result.stdout)
            #expect(info["trackCount"] as? Int == 0)
            #expect(info["schemaVersion"] as? Int == 18)
            #expect(info["path"] as? String == dir.path("lib").path)
            for key in ["storeID", "artworkCount", "playlistCount", "bytesOnDisk"] { #expect(info[key] != nil, "missing \(key)") }
            let text = try shelf(["info"], environment: ["SHELF_LIBRARY": dir.path("lib").path])
            #expect(text.status == 0)
            #expect(text.stdout.contains("schema version: 18"))
        }
    }

    @Test func tracksPageSortedWithJSONShape() async throws {
        try await offCooperativePool {
            let dir = try generated(300)
            let result = try shelf(["--library", dir.url.path, "tracks", "--sort", "albumArtist:desc", "--limit", "7", "--offset", "3", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let page = try json(result.stdout)
            #expect(page["total"] as? Int == 300)
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.count == 7)
            for key in ["id", "path", "title", "albumArtist", "hasArtwork", "sortArtist", "dateAdded", "rating"] {
                #expect(items[0][key] != nil, "missing \(key)")
            }
            let all = try json(try shelf(["--library", dir.url.path, "tracks", "--sort", "albumArtist:desc", "--limit", "10", "--json"]).stdout)
            let allIDs = try #require(all["items"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            #expect(Array(allIDs[3..<10]) == items.compactMap { $0["id"] as? Int })
            let text = try shelf(["--library", dir.url.path, "tracks", "--limit", "5"])
            #expect(text.status == 0)
            #expect(text.stdout.contains("(5 of 300 tracks)"))
        }
    }

    @Test func trackAndDelete() async throws {
        try await offCooperativePool {
            let dir = try generated(20)
            let one = try shelf(["--library", dir.url.path, "track", "3", "--json"])
            #expect(one.status == 0)
            #expect(try json(one.stdout)["id"] as? Int == 3)
            let deleted = try shelf(["--library", dir.url.path, "delete", "3", "4", "3", "--json"])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(try json(deleted.stdout)["deleted"] as? [Int] == [3, 4])
            let gone = try shelf(["--library", dir.url.path, "track", "3", "--json"])
            #expect(gone.status == 2)
            let error = try #require(try json(gone.stdout)["error"] as? [String: Any])
            #expect(error["code"] as? String == "trackNotFound")
            #expect(gone.stderr.hasPrefix("shelf: no track with ID 3"))
            // All or nothing: one missing ID deletes none.
            let partial = try shelf(["--library", dir.url.path, "delete", "5", "999"])
            #expect(partial.status == 2)
            #expect(try json(try shelf(["--library", dir.url.path, "info", "--json"]).stdout)["trackCount"] as? Int == 18)
        }
    }

    @Test func usageErrorsExitOne() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            for arguments in [
                ["frobnicate"], ["tracks", "--sort", "nope"], ["tracks", "--bogus"], ["track"], ["track", "x"], [],
                ["tracks", "--limit", "-3"], ["delete"],
            ] {
                let result = try shelf(["--library", dir.url.path] + arguments)
                #expect(result.status == 1, "\(arguments)")
                #expect(result.stderr.contains("; see 'shelf help"), "\(arguments)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
            let jsonResult = try shelf(["--library", dir.url.path, "frobnicate", "--json"])
            #expect(try (json(jsonResult.stdout)["error"] as? [String: Any])?["code"] as? String == "usage")
        }
    }

    @Test func corruptStoreIsAFailureNamingThePath() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let store = dir.path("library.sqlite")
            let garbage = Data(repeating: 0x42, count: 8_192)
            try garbage.write(to: store)
            let result = try shelf(["--library", dir.url.path, "info", "--json"])
            #expect(result.status == 2)
            #expect(result.stderr.contains(store.path))
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(try (json(result.stdout)["error"] as? [String: Any])?["code"] as? String == "notALibrary")
            #expect(try Data(contentsOf: store) == garbage)
        }
    }

    @Test func lockHeldByAnotherProcessWaitsThenFails() async throws {
        try await offCooperativePool {
            let dir = try generated(10)
            let holder = try LockHolder(databasePath: dir.path("library.sqlite").path)
            let start = Date()
            let result = try shelf(["--library", dir.url.path, "delete", "1", "--json"], environment: ["SHELF_BUSY_TIMEOUT_MS": "300"])
            // A lower bound only: SQLite's busy handler sleeps the whole timeout before giving up, and a
            // sleep lasts at least what it asked for on any machine, so this cannot fail by being fast.
            #expect(Date().timeIntervalSince(start) >= 0.25)
            #expect(result.status == 2)
            #expect(try (json(result.stdout)["error"] as? [String: Any])?["code"] as? String == "busy")
            #expect(result.stderr.contains("locked"))
            holder.release()
            #expect(try shelf(["--library", dir.url.path, "delete", "1"]).status == 0)
        }
    }

    @Test func tokenChangesAndCompaction() async throws {
        try await offCooperativePool {
            let dir = try generated(20)
            let lib = ["--library", dir.url.path]
            let tokenResult = try shelf(lib + ["token", "--json"])
            #expect(tokenResult.status == 0)
            let token = try #require(try json(tokenResult.stdout)["token"] as? String)
            #expect(token.hasPrefix("shelf1."))
            #expect(try shelf(lib + ["token"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == token)
            #expect(try shelf(lib + ["delete", "3", "5"]).status == 0)

            let changes = try shelf(lib + ["changes", "--since", token, "--json"])
            #expect(changes.status == 0, "\(changes.stderr)")
            let document = try json(changes.stdout)
            let list = try #require(document["changes"] as? [[String: Any]])
            #expect(list.count == 1)
            let tracks = try #require(list[0]["tracks"] as? [String: Any])
            #expect(tracks["deleted"] as? [Int] == [3, 5])
            #expect((tracks["inserted"] as? [Any])?.isEmpty == true)
            #expect(list[0]["playlists"] is [String: Any])
            #expect(list[0]["artwork"] is [String: Any])
            #expect((list[0]["token"] as? String)?.hasPrefix("shelf1.") == true)
            let newToken = try #require(document["token"] as? String)
            #expect(newToken != token)

            let summary = try json(try shelf(lib + ["changes", "--since", token, "--summary", "--json"]).stdout)
            #expect((summary["changes"] as? [Any])?.count == 1)

            let storeID = token.split(separator: ".")[1]
            let future = "shelf1.\(storeID).999"
            let expired = try shelf(lib + ["changes", "--since", future, "--json"])
            #expect(expired.status == 2)
            #expect(try (json(expired.stdout)["error"] as? [String: Any])?["code"] as? String == "tokenExpired")
            let malformed = try shelf(lib + ["changes", "--since", "nonsense", "--json"])
            #expect(malformed.status == 2)
            #expect(try (json(malformed.stdout)["error"] as? [String: Any])?["code"] as? String == "malformedToken")
            #expect(try shelf(lib + ["changes"]).status == 1)

            let compact = try shelf(lib + ["history", "compact", "--all", "--json"])
            #expect(compact.status == 0, "\(compact.stderr)")
            #expect(try json(compact.stdout)["transactions"] as? Int == 2)
            let unavailable = try shelf(lib + ["changes", "--since", token, "--json"])
            #expect(unavailable.status == 2)
            #expect(try (json(unavailable.stdout)["error"] as? [String: Any])?["code"] as? String == "detailsUnavailable")
            let afterCompaction = try json(try shelf(lib + ["changes", "--since", token, "--summary", "--json"]).stdout)
            let net = try #require((afterCompaction["changes"] as? [[String: Any]])?.first?["tracks"] as? [String: Any])
            #expect(net["deleted"] as? [Int] == [3, 5])
        }
    }

    @Test func cursorsFiltersSectionsSnapshotsAndTheMirror() async throws {
        try await offCooperativePool {
            let dir = try generated(400)
            let lib = ["--library", dir.url.path]
            let build = try shelf(lib + ["mirror", "build", "--json"])
            #expect(build.status == 0, "\(build.stderr)")
            #expect(try json(build.stdout)["state"] as? String == "ready")

            // Walking by cursor gives the snapshot's order.
            let snapshot = try json(try shelf(lib + ["snapshot", "--sort", "title:desc", "--json"]).stdout)["ids"] as? [Int] ?? []
            #expect(snapshot.count == 400)
            var walked: [Int] = []
            var cursor: String?
            repeat {
                let page = try json(
                    try shelf(lib + ["tracks", "--sort", "title:desc", "--limit", "150", "--json"] + (cursor.map { ["--after", $0] } ?? [])).stdout)
                let items = page["items"] as? [[String: Any]] ?? []
                #expect(items.allSatisfy { $0["section"] is String && $0["lyrics"] != nil })
                walked += items.compactMap { $0["id"] as? Int }
                cursor = page["nextCursor"] as? String
                #expect(page["nextCursor"] != nil)  // present, null at the end
            } while cursor != nil
            #expect(walked == snapshot)

            let sections = try json(try shelf(lib + ["sections", "--sort", "artist", "--json"]).stdout)["sections"] as? [[String: Any]] ?? []
            #expect(sections.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 400)
            #expect(sections.first?["firstIndex"] as? Int == 0)
            #expect(sections.allSatisfy { $0["name"] is String })

            let filtered = try json(try shelf(lib + ["tracks", "--filter", "year:1990..1999 -genre:=rock", "--limit", "500", "--json"]).stdout)
            let years = (filtered["items"] as? [[String: Any]] ?? []).compactMap { $0["year"] as? Int }
            #expect(!years.isEmpty && years.allSatisfy { (1990...1999).contains($0) })
            #expect(filtered["total"] as? Int == years.count)

            let bad = try shelf(lib + ["tracks", "--filter", "year:19x0"])
            #expect(bad.status == 1)
            #expect(bad.stderr.contains("position 6"))
            #expect(try shelf(lib + ["tracks", "--after", "not-a-cursor"]).status == 1)
            #expect(try json(try shelf(lib + ["mirror", "disable", "--json"]).stdout)["state"] as? String == "disabled")
            let direct = try json(try shelf(lib + ["snapshot", "--sort", "title:desc", "--json"]).stdout)["ids"] as? [Int] ?? []
            #expect(direct == snapshot)
            #expect(try json(try shelf(lib + ["mirror", "enable", "--json"]).stdout)["state"] as? String == "ready")
            #expect(try json(try shelf(lib + ["mirror", "purge", "--json"]).stdout)["state"] as? String == "disabled")
            #expect(!FileManager.default.fileExists(atPath: dir.path("mirror.sqlite").path))
        }
    }

    @Test func artworkThumbnailsAndStats() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let made = try ChildProcess.run(
                products.appendingPathComponent("shelf-bench"),
                ["generate", "--tracks", "30", "--seed", "3", "--library", dir.url.path, "--artwork-px", "120", "--artwork-flat"])
            #expect(made.status == 0, "\(made.stderr)")
            let lib = ["--library", dir.url.path]
            let stats = try json(try shelf(lib + ["artwork", "--stats", "--json"]).stdout)
            #expect(stats["tracksWithArtwork"] as? Int == 30)
            let pictures = try #require(stats["pictures"] as? Int)
            #expect(pictures > 0 && pictures < 30, "one picture per album, shared by its tracks")
            for key in ["bytes", "largestBytes", "sharedPictures"] { #expect(stats[key] != nil, "missing \(key)") }

            let png = dir.path("cover.png")
            let written = try shelf(lib + ["artwork", "1", "--size", "48", "--out", png.path, "--json"])
            #expect(written.status == 0, "\(written.stderr)")
            let report = try json(written.stdout)
            #expect(report["width"] as? Int == 48 && report["height"] as? Int == 48 && report["format"] as? String == "png")
            let bytes = try Data(contentsOf: png)
            #expect(bytes.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) && bytes.count == report["bytes"] as? Int)
            let jpeg = dir.path("cover.jpg")
            #expect(try shelf(lib + ["artwork", "2", "--size", "500", "--out", jpeg.path]).status == 0)
            #expect(try Data(contentsOf: jpeg).prefix(3) == Data([0xFF, 0xD8, 0xFF]))

            #expect(try shelf(lib + ["artwork", "1", "--size", "48", "--out", dir.path("x.gif").path]).status == 1)
            #expect(try shelf(lib + ["artwork", "1", "--out", png.path]).status == 1)
            let missing = try shelf(lib + ["artwork", "999", "--size", "48", "--out", png.path, "--json"])
            #expect(missing.status == 2)
            #expect(try (json(missing.stdout)["error"] as? [String: Any])?["code"] as? String == "trackNotFound")
        }
    }

    @Test func importThenScanAndPrune() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music/album")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            for index in 0..<3 { try TestAudio.wav(seconds: 0.2, frequency: 300 + Double(index) * 10).write(to: music.appendingPathComponent("\(index).wav")) }
            try Data([0x49, 0x44, 0x33, 1, 2]).write(to: music.appendingPathComponent("broken.mp3"))
            let lib = ["--library", dir.path("lib").path]
            let first = try shelf(lib + ["import", dir.path("music").path, "--json"])
            #expect(first.status == 0, "\(first.stderr)")
            let report = try json(first.stdout)
            #expect(report["added"] as? Int == 3 && report["updated"] as? Int == 0 && report["moved"] as? Int == 0)
            let failed = try #require(report["failed"] as? [[String: Any]])
            #expect(failed.count == 1 && (failed[0]["path"] as? String)?.hasSuffix("broken.mp3") == true && failed[0]["error"] != nil)
            #expect((report["duplicates"] as? [Any])?.isEmpty == true)
            let again = try json(try shelf(lib + ["import", dir.path("music").path, "--json"]).stdout)
            #expect(again["unchanged"] as? Int == 3 && again["added"] as? Int == 0)

            try FileManager.default.removeItem(at: music.appendingPathComponent("1.wav"))
            let scan = try json(try shelf(lib + ["scan", "--json"]).stdout)
            #expect((scan["missing"] as? [[String: Any]])?.count == 1 && scan["pruned"] as? Int == 0)
            let pruned = try json(try shelf(lib + ["scan", "--prune", "--json"]).stdout)
            #expect(pruned["pruned"] as? Int == 1)
            #expect(try json(try shelf(lib + ["info", "--json"]).stdout)["trackCount"] as? Int == 2)
            #expect(try shelf(lib + ["import"]).status == 1)
        }
    }

    @Test func playlistsByCommandLine() async throws {
        try await offCooperativePool {
            let dir = try generated(20)
            let lib = ["--library", dir.url.path]
            #expect(try json(try shelf(lib + ["playlist", "create", "Mix", "--json"]).stdout)["id"] as? Int == 1)
            #expect(try json(try shelf(lib + ["playlist", "add", "1", "3", "4", "5", "3", "--json"]).stdout)["itemCount"] as? Int == 4)
            #expect(try shelf(lib + ["playlist", "add", "1", "7", "--at", "2"]).status == 0)  // 3 7 4 5 3
            #expect(try shelf(lib + ["playlist", "move", "1", "5", "--to", "1"]).status == 0)  // 3 3 7 4 5
            #expect(try shelf(lib + ["playlist", "remove", "1", "2"]).status == 0)  // 3 7 4 5
            let shown = try json(try shelf(lib + ["playlist", "show", "1", "--json"]).stdout)
            let items = try #require(shown["items"] as? [[String: Any]])
            #expect(items.compactMap { ($0["track"] as? [String: Any])?["id"] as? Int } == [3, 7, 4, 5])
            #expect(items.compactMap { $0["position"] as? Int } == [1, 2, 3, 4])
            #expect((shown["playlist"] as? [String: Any])?["itemCount"] as? Int == 4)
            let own = try json(try shelf(lib + ["playlist", "page", "1", "--limit", "3", "--json"]).stdout)
            #expect((own["items"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [3, 7, 4] && own["total"] as? Int == 4)
            let cursor = try #require(own["nextCursor"] as? String)
            let rest = try json(try shelf(lib + ["playlist", "page", "1", "--limit", "3", "--after", cursor, "--json"]).stdout)
            #expect((rest["items"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [5] && rest["nextCursor"] is NSNull)
            let sorted = try json(try shelf(lib + ["playlist", "page", "1", "--sort", "title", "--json"]).stdout)
            let sortedIDs = try #require(sorted["items"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            let library = try #require(try json(try shelf(lib + ["snapshot", "--sort", "title", "--json"]).stdout)["ids"] as? [Int])
            #expect(sortedIDs == library.filter { [3, 7, 4, 5].contains($0) })
            let bad = try shelf(lib + ["playlist", "move", "1", "9", "--to", "1", "--json"])
            #expect(bad.status == 2 && bad.stderr.contains("position 9"))
            #expect(try shelf(lib + ["playlist", "frobnicate"]).status == 1)
            #expect(try shelf(lib + ["playlist", "create", "Folder", "--folder"]).status == 0)
            #expect(try shelf(lib + ["playlist", "create", "Inside", "--parent", "2"]).status == 0)
            let listed = try #require(try json(try shelf(lib + ["playlist", "list", "--json"]).stdout)["playlists"] as? [[String: Any]])
            #expect(listed.compactMap { $0["kind"] as? String } == ["regular", "folder", "regular"])
            #expect(try shelf(lib + ["playlist", "delete", "2"]).status == 0)
            #expect(try #require(try json(try shelf(lib + ["playlist", "list", "--json"]).stdout)["playlists"] as? [[String: Any]]).count == 1)
        }
    }

    @Test func searchByCommandLine() async throws {
        try await offCooperativePool {
            let dir = try generated(400)
            let lib = ["--library", dir.url.path]
            let first = try shelf(lib + ["tracks", "--limit", "1", "--json"])
            let title = try #require(((try json(first.stdout))["items"] as? [[String: Any]])?.first?["title"] as? String)
            let word = try #require(title.split(separator: " ").first.map(String.init))
            let result = try shelf(lib + ["search", word, "--limit", "3", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let page = try json(result.stdout)
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(!items.isEmpty && (page["total"] as? Int ?? 0) >= items.count)
            #expect(page.keys.contains("nextCursor"))
            for key in ["id", "title", "artist", "section"] { #expect(items[0][key] != nil, "missing \(key)") }
            if let cursor = page["nextCursor"] as? String {
                let next = try json(try shelf(lib + ["search", word, "--limit", "3", "--after", cursor, "--json"]).stdout)
                let nextIDs = try #require(next["items"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
                #expect(Set(nextIDs).isDisjoint(with: items.compactMap { $0["id"] as? Int }))
            }
            let none = try json(try shelf(lib + ["search", "qqqzzzxx", "--json"]).stdout)
            #expect((none["items"] as? [Any])?.isEmpty == true && none["nextCursor"] is NSNull && none["total"] as? Int == 0)
            #expect(try shelf(lib + ["search", "?!"]).status == 1)
            #expect(try shelf(lib + ["search", "a", "--filter", "year:>"]).status == 1)
            let text = try shelf(lib + ["search", word])
            #expect(text.status == 0 && text.stdout.contains("matching '\(word)'"))
        }
    }

    @Test func viewsAndDrillDownByCommandLine() async throws {
        try await offCooperativePool {
            let dir = try generated(300)
            let lib = ["--library", dir.url.path]
            let owners = try json(try shelf(lib + ["artists", "--by", "albumArtist", "--limit", "5", "--json"]).stdout)
            let first = try #require((owners["items"] as? [[String: Any]])?.first)
            for key in ["id", "name", "trackCount", "albumCount", "section", "kind"] { #expect(first[key] != nil, "missing \(key)") }
            #expect(owners.keys.contains("nextCursor") && (owners["total"] as? Int ?? 0) > 5)
            let artistID = try #require(first["id"] as? Int)
            let albums = try json(try shelf(lib + ["albums", "--artist", String(artistID), "--json"]).stdout)
            let albumItems = try #require(albums["items"] as? [[String: Any]])
            #expect(albumItems.count == first["albumCount"] as? Int)
            let album = try #require(albumItems.first)
            let tracks = try json(try shelf(lib + ["tracks", "--album", String(try #require(album["id"] as? Int)), "--json"]).stdout)
            #expect((tracks["items"] as? [Any])?.count == album["trackCount"] as? Int)
            for command in ["albums", "artists", "composers", "genres"] {
                let result = try shelf(lib + [command, "--sort", "name:desc", "--sort-tags", "off", "--limit", "3"])
                #expect(result.status == 0, "\(command): \(result.stderr)")
            }
            #expect(try shelf(lib + ["albums", "--sort", "year"]).status == 1)
            #expect(try shelf(lib + ["tracks", "--album", "12345"]).status != 0)
        }
    }

    @Test func smartPlaylistsByCommandLine() async throws {
        try await offCooperativePool {
            let dir = try generated(200)
            let lib = ["--library", dir.url.path]
            let created = try shelf(lib + ["smart", "create", "Top", "--rule", "rating:>=40 , genre:=Rock", "--limit", "15", "--by", "highestRated", "--json"])
            #expect(created.status == 0, "\(created.stderr)")
            let id = try #require(try json(created.stdout)["id"] as? Int)
            let shown = try json(try shelf(lib + ["smart", "show", String(id), "--limit", "5", "--json"]).stdout)
            #expect(shown["trackCount"] as? Int == 15)
            #expect((shown["items"] as? [Any])?.count == 5 && (shown["trackIDs"] as? [Int])?.count == 15)
            // `playlist show` lists a smart playlist's contents as evaluated now, in selection order.
            let listed = try json(try shelf(lib + ["playlist", "show", String(id), "--json"]).stdout)
            let listedIDs = (listed["items"] as? [[String: Any]])?.compactMap { ($0["track"] as? [String: Any])?["id"] as? Int }
            #expect(listedIDs == shown["trackIDs"] as? [Int])
            let loop = try shelf(lib + ["smart", "create", "Loop", "--rule", "playlist:99"])
            #expect(loop.status == 2 && loop.stderr.contains("does not exist"), "\(loop.stderr)")
            #expect(try shelf(lib + ["smart", "create", "Bad", "--rule", "year:last:3"]).status == 1)
            #expect(try shelf(lib + ["smart", "create", "Bad", "--rule", "rating:>1", "--limit", "10"]).status == 1)
            #expect(try shelf(lib + ["smart", "create", "Hour", "--rule", "dateAdded:last:3650d", "--limit", "1h", "--by", "random"]).status == 0)
        }
    }

    @Test func editByCommandLineAndAWriteStoppedByAFileSizeLimit() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            let big = music.appendingPathComponent("big.wav")
            try TestAudio.wav(seconds: 3).write(to: big)
            let lib = ["--library", dir.path("lib").path]
            #expect(try shelf(lib + ["import", music.path, "--json"]).status == 0)
            let edited = try shelf(lib + ["edit", "1", "--set", "title=Renamed", "--set", "year=2001", "--json"])
            #expect(edited.status == 0, "\(edited.stderr)")
            let result = try json(edited.stdout)
            #expect(result["updated"] as? [Int] == [1] && (result["skipped"] as? [Any])?.isEmpty == true && (result["failed"] as? [Any])?.isEmpty == true)
            let draft = try json(try shelf(lib + ["draft", "1", "--json"]).stdout)
            #expect((draft["track"] as? [String: Any])?["title"] as? String == "Renamed")
            #expect((draft["fileTags"] as? [String: Any])?["TITLE"] as? String == "Renamed" && draft["source"] as? String == "library")
            #expect(try shelf(lib + ["edit", "1", "--set", "bogus=1"]).status == 1)
            #expect(try shelf(lib + ["edit", "1"]).status == 1)
            // A file size limit below the file's size: the copy cannot be written, so the original
            // keeps every byte and no temporary file is left. Not under ThreadSanitizer (`make tsan`),
            // whose runtime itself dies of SIGBUS in its own file-backed mappings under that limit.
            guard ProcessInfo.processInfo.environment["SHELF_SANITIZER"] == nil else { return }
            let before = try Data(contentsOf: big)
            let limited = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/bash"),
                ["-c", "ulimit -f 64; exec \"$0\" \"$@\"", products.appendingPathComponent("shelf").path] + lib + [
                    "edit", "1", "--set", "title=Never", "--json",
                ])
            #expect(limited.status == 2, "\(limited.stderr)")
            let failed = try json(limited.stdout)
            #expect((failed["failed"] as? [[String: Any]])?.first?["path"] as? String == big.path)
            #expect(try Data(contentsOf: big) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: music.path) == ["big.wav"])
        }
    }

    @Test func exportByCommandLine() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
            for index in 0..<2 { try TestAudio.wav(seconds: 0.2, frequency: 300 + Double(index) * 90).write(to: music.appendingPathComponent("\(index).wav")) }
            let lib = ["--library", dir.path("lib").path]
            #expect(try shelf(lib + ["import", music.path]).status == 0)
            #expect(try shelf(lib + ["edit", "1", "2", "--set", "title=../../escape", "--set", "albumArtist=A/B"]).status == 0)
            #expect(try shelf(lib + ["edit", "2", "--set", "trackNumber=2"]).status == 0)
            let format = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") ? "flac" : "copy"
            let out = dir.path("out")
            let result = try shelf(lib + ["export", "--filter", "title:escape", "--to", out.path, "--format", format, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let exported = try #require(try json(result.stdout)["exported"] as? [[String: Any]])
            #expect(exported.count == 2)
            for item in exported {
                let path = try #require(item["path"] as? String)
                #expect(path.hasPrefix(out.path + "/A_B/") && item["track"] is Int && item["source"] is Int, "\(path)")
            }
            #expect(try json(try shelf(lib + ["info", "--json"]).stdout)["trackCount"] as? Int == 4)
            #expect(try shelf(lib + ["export", "1", "--to", out.path, "--format", "aiff"]).status == 1)
            #expect(try shelf(lib + ["export", "--to", out.path]).status == 1)
            let again = try shelf(lib + ["export", "1", "--to", out.path, "--format", format, "--json"])
            let failedAgain = try json(again.stdout)["failed"] as? [Any]
            #expect(again.status == 2 && failedAgain?.count == 1)
        }
    }
}
