import Foundation
import Shelf
import ShelfTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A Subsonic client of a running `shelf serve`: credentials as query parameters, answers parsed.
struct SubsonicClient {
    /// Over a socket with curl, or straight into an in-process server's handlers.
    enum Transport {
        case curl(Curl)
        case inProcess(InProcessServer)
    }
    let transport: Transport
    /// Credentials sent with every call (`u`+`p`, `u`+`t`+`s` or `apiKey`).
    var auth: [(String, String)]

    init(_ server: ServerProcess, auth: [(String, String)] = [("u", "ann"), ("p", ServedLibrary.annPassword)]) {
        transport = .curl(Curl(base: server.base))
        self.auth = auth
    }

    /// The curl client of a socket transport (what only a real client can send: a POSTed form).
    var curl: Curl {
        guard case .curl(let curl) = transport else { preconditionFailure("an in-process client has no curl") }
        return curl
    }

    /// A client of an in-process server, for handler-level tests (no socket, no curl).
    init(_ server: InProcessServer, auth: [(String, String)] = [("u", "ann"), ("p", ServedLibrary.annPassword)]) {
        transport = .inProcess(server)
        self.auth = auth
    }

    static func encode(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=?#")
        return pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// `/rest/NAME.view?…` raw.
    func raw(_ name: String, _ parameters: [(String, String)] = [], headers: [String: String] = [:]) throws -> HTTPResult {
        let query = auth + [("v", "1.16.1"), ("c", "test")] + parameters
        switch transport {
        case .curl(let curl):
            return try curl.request("GET", "/rest/\(name).view?" + Self.encode(query), headers: headers)
        case .inProcess(let server):
            let answer = server.blocking(
                "GET", "/rest/\(name).view", query: query, headers: Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { a, _ in a })
            let fields = Dictionary(answer.headers.map { ($0.0.lowercased(), $0.1) }) { a, b in "\(a), \(b)" }
            return HTTPResult(status: answer.status, headers: fields, body: answer.body, exitCode: 0)
        }
    }

    /// The `subsonic-response` object of a JSON call.
    func json(_ name: String, _ parameters: [(String, String)] = []) throws -> [String: Any] {
        let result = try raw(name, parameters + [("f", "json")])
        let root = try #require(result.json as? [String: Any], "\(name): \(result.status) \(result.text)")
        return try #require(root["subsonic-response"] as? [String: Any])
    }

    /// A JSON call that must succeed.
    func ok(_ name: String, _ parameters: [(String, String)] = []) throws -> [String: Any] {
        let response = try json(name, parameters)
        #expect(response["status"] as? String == "ok", "\(name) \(parameters): \(response)")
        return response
    }

    /// The error code of a failed JSON call.
    func errorCode(_ name: String, _ parameters: [(String, String)] = []) throws -> Int? {
        let response = try json(name, parameters)
        #expect(response["status"] as? String == "failed", "\(name) \(parameters): \(response)")
        return (response["error"] as? [String: Any])?["code"] as? Int
    }
}

/// XML parsed into the shape JSON has after `normalized`: attributes as strings, children by
/// name as arrays, text as "value".
func xmlTree(_ data: Data) throws -> [String: Any] {
    let document = try XMLDocument(data: data)
    func convert(_ element: XMLElement) -> [String: Any] {
        var out: [String: Any] = [:]
        for attribute in element.attributes ?? [] where attribute.name != "xmlns" { out[attribute.name ?? ""] = attribute.stringValue ?? "" }
        var children: [String: [Any]] = [:]
        for child in element.children ?? [] {
            if let child = child as? XMLElement { children[child.name ?? "", default: []].append(convert(child)) }
        }
        for (name, list) in children { out[name] = list }
        if children.isEmpty, let text = element.stringValue, !text.isEmpty { out["value"] = text }
        return out
    }
    let root = try #require(document.rootElement())
    #expect(root.name == "subsonic-response")
    #expect(root.uri == "http://subsonic.org/restapi")
    return convert(root)
}

/// JSON made comparable with `xmlTree`: scalars as their XML text, every object under a key a
/// list, and a bare value in a list (an extension's `versions`) as the element XML makes of it.
/// An empty text ("value": "") is dropped: in XML it is an empty element, as no text is.
func normalized(_ value: Any) -> Any {
    switch value {
    case let object as [String: Any]:
        var out: [String: Any] = [:]
        for (key, child) in object where !(key == "value" && child as? String == "") {
            switch child {
            case let list as [Any]: out[key] = list.map { $0 is [String: Any] ? normalized($0) : ["value": normalized($0)] }
            case let nested as [String: Any]: out[key] = [normalized(nested)]
            default: out[key] = normalized(child)
            }
        }
        return out
    case let number as NSNumber:
        // A JSON true/false arrives as a boolean NSNumber (objCType "c"), never as an integer's "q".
        if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
        return number.stringValue
    default: return "\(value)"
    }
}

@Suite(.serialized) struct SubsonicTests {
    /// The fixture with track 1's album artist set to 小倉唯, read おぐらゆい.
    static func fixture() throws -> ServedLibrary {
        let fixture = try ServedLibrary()
        let edited = try fixture.shelf(["edit", "1", "--set", "albumArtist=小倉唯", "--set", "sortAlbumArtist=おぐらゆい"])
        try #require(edited.status == 0, "\(edited.stderr)")
        let lyrics = try fixture.shelf(["edit", "2", "--set", "lyrics=[00:01.50]Hello\n[00:03.00]World"])
        try #require(lyrics.status == 0, "\(lyrics.stderr)")
        // What real libraries hold and apps stumbled on: a blank album, a track with no artist of
        // any kind, an album sort tag.
        // And several values per field, written into the file and read back from it.
        for (track, changes) in [
            (3, ["album= "]), (4, ["artist=", "albumArtist=", "album="]), (5, ["sortAlbum=Zweite, Die"]),
            (6, ["artists=Daft Punk;Pharrell Williams", "isrcs=USQX91300108", "moods=Happy", "bpm=116"]),
        ] {
            let edited = try fixture.shelf(["edit", "\(track)"] + changes.flatMap { ["--set", $0] })
            try #require(edited.status == 0, "\(edited.stderr)")
        }
        return fixture
    }

    /// getRandomSongs draws from the whole library uniformly: over many calls every track comes up
    /// about equally often, deleted ones never (the draw is by row ID, so gaps must not bias it).
    @Test func randomSongsAreUniformOverTheLibrary() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 30)
            defer { fixture.remove() }
            let deleted = try fixture.shelf(["delete"] + (1...10).map { String($0 * 3) })
            try #require(deleted.status == 0, "\(deleted.stderr)")
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            var counts: [String: Int] = [:]
            for _ in 0..<200 {
                let songs = (try ann.ok("getRandomSongs", [("size", "10")])["randomSongs"] as? [String: Any])?["song"] as? [[String: Any]] ?? []
                #expect(songs.count == 10)
                #expect(Set(songs.compactMap { $0["id"] as? String }).count == songs.count, "a song twice in one answer")
                for song in songs { counts[song["id"] as? String ?? "", default: 0] += 1 }
            }
            // 2,000 draws over 20 tracks: 100 each expected; 40 or 200 would be beyond chance.
            #expect(Set(counts.keys) == Set((1...30).filter { $0 % 3 != 0 }.map { "tr-\($0)" }))
            for (id, count) in counts { #expect((40...200).contains(count), "\(id) drawn \(count) times of 2,000") }
            // More than the library holds: every track once.
            let all = (try ann.ok("getRandomSongs", [("size", "500")])["randomSongs"] as? [String: Any])?["song"] as? [[String: Any]] ?? []
            #expect(all.count == 20)
            let albums =
                (try ann.ok("getAlbumList2", [("type", "random"), ("size", "500")])["albumList2"] as? [String: Any])?["album"] as? [[String: Any]] ?? []
            let every =
                (try ann.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500")])["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]
                ?? []
            #expect(Set(albums.compactMap { $0["id"] as? String }) == Set(every.compactMap { $0["id"] as? String }))
        }
    }

    /// Blank and white-space names never reach an app as empty names: albums and artists carry the
    /// placeholders, and every album has an artist.
    @Test func blankNamesGetPlaceholders() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let edited = try fixture.shelf(["edit", "1", "--set", "artist= ", "--set", "albumArtist= ", "--set", "album= "])
            try #require(edited.status == 0, "\(edited.stderr)")
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            let indexes = (try ann.ok("getArtists")["artists"] as? [String: Any])?["index"] as? [[String: Any]] ?? []
            let names = indexes.flatMap { ($0["artist"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
            #expect(!names.isEmpty)
            #expect(names.allSatisfy { !$0.trimmingCharacters(in: .whitespaces).isEmpty }, "\(names)")
            let albums =
                (try ann.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500")])["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]
                ?? []
            #expect(!albums.isEmpty)
            for album in albums {
                #expect(!((album["name"] as? String) ?? "").trimmingCharacters(in: .whitespaces).isEmpty, "\(album)")
                #expect(!((album["artist"] as? String) ?? "").trimmingCharacters(in: .whitespaces).isEmpty, "\(album)")
            }
            let song = (try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any]) ?? [:]
            #expect(song["artist"] as? String == "[Unknown Artist]")
        }
    }

    /// An LRC's `[la:]` and `[offset:]` reach structuredLyrics' `lang` and `offset`; the header
    /// lines are not lyrics lines.
    /// OpenSubsonic's song lists from a file whose lists were written by `shelf edit`: each credited
    /// artist with the ID the album-artist view gives the name, genres, ISRCs, moods, BPM.
    @Test func songsCarryEveryValueOfTheirLists() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let edited = try fixture.shelf([
                "edit", "1", "--set", "artists=Daft Punk;Pharrell Williams", "--set", "genres=Disco;Funk",
                "--set", "isrcs=USQX91300108", "--set", "moods=Happy", "--set", "bpm=116",
                "--set", "composers=Thomas Bangalter;Guy-Manuel de Homem-Christo",
                "--set", "labels=Columbia;Daft Life", "--set", "releaseTypes=album;soundtrack",
            ])
            try #require(edited.status == 0, "\(edited.stderr)")
            let server = try InProcessServer(directory: fixture.library)
            let client = SubsonicClient(server)
            let song = try #require(try client.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            let artists = try #require(song["artists"] as? [[String: Any]])
            #expect(artists.compactMap { $0["name"] as? String } == ["Daft Punk", "Pharrell Williams"])
            #expect(artists.allSatisfy { ($0["id"] as? String)?.hasPrefix("ar-") == true } && Set(artists.compactMap { $0["id"] as? String }).count == 2)
            #expect((song["genres"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Disco", "Funk"])
            #expect(song["isrc"] as? [String] == ["USQX91300108"] && song["moods"] as? [String] == ["Happy"] && song["bpm"] as? Int == 116)
            #expect(song["displayComposer"] as? String == "Thomas Bangalter, Guy-Manuel de Homem-Christo")
            let composers = (song["contributors"] as? [[String: Any]] ?? []).filter { $0["role"] as? String == "composer" }
            #expect(composers.compactMap { ($0["artist"] as? [String: Any])?["name"] as? String } == ["Thomas Bangalter", "Guy-Manuel de Homem-Christo"])
            // The album artist's own ID is the one its albums and getArtists give.
            let owner = try #require((song["albumArtists"] as? [[String: Any]])?.first?["id"] as? String)
            #expect(owner == song["artistId"] as? String)
            let xml = try client.raw("getSong", [("id", "tr-1")]).text
            #expect(xml.contains("<isrc>USQX91300108</isrc>") && xml.contains("<genres name=\"Funk\"/>"), "\(xml)")
            // A client declaring API 1.8.0 gets the same song without OpenSubsonic's child elements
            // (attributes stay); JSON is the same for every client.
            let older = try client.raw("getSong", [("id", "tr-1"), ("v", "1.8.0")]).text
            #expect(!older.contains("<isrc>") && !older.contains("<genres ") && older.contains("bpm=\"116\""), "\(older)")
            // Lists of albums carry the release fields of each album's first track, as getAlbum does.
            let albumID = try #require(song["albumId"] as? String)
            let list = try client.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500")])
            let albums = try #require((list["albumList2"] as? [String: Any])?["album"] as? [[String: Any]])
            let album = try #require(albums.first { $0["id"] as? String == albumID })
            #expect(album["releaseTypes"] as? [String] == ["album", "soundtrack"])
            #expect((album["recordLabels"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Columbia", "Daft Life"])
            #expect(album["isCompilation"] is Bool && album["displayArtist"] is String)
            let full = try #require(try client.ok("getAlbum", [("id", albumID)])["album"] as? [String: Any])
            #expect(full["releaseTypes"] as? [String] == album["releaseTypes"] as? [String])
            // Artists say their roles: every getArtists entry is an album artist.
            let artist = try #require(try client.ok("getArtist", [("id", owner)])["artist"] as? [String: Any])
            #expect((artist["roles"] as? [String])?.contains("albumartist") == true, "\(artist)")
            let index = try #require((try client.ok("getArtists")["artists"] as? [String: Any])?["index"] as? [[String: Any]])
            let listed = index.flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }
            #expect(!listed.isEmpty && listed.allSatisfy { ($0["roles"] as? [String])?.first == "albumartist" })
        }
    }

    @Test func lrcLanguageAndOffset() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let edited = try fixture.shelf(["edit", "1", "--set", "lyrics=[ti:Song]\n[la:ja]\n[offset:+250]\n[00:01.50]光\n[00:03.00]影"])
            try #require(edited.status == 0, "\(edited.stderr)")
            let server = try InProcessServer(directory: fixture.library)
            let list = try #require(try SubsonicClient(server).ok("getLyricsBySongId", [("id", "tr-1")])["lyricsList"] as? [String: Any])
            let structured = try #require((list["structuredLyrics"] as? [[String: Any]])?.first)
            #expect(structured["lang"] as? String == "ja" && structured["offset"] as? Int == 250 && structured["synced"] as? Bool == true)
            let lines = (structured["line"] as? [[String: Any]]) ?? []
            #expect(lines.compactMap { $0["value"] as? String } == ["光", "影"] && lines.compactMap { $0["start"] as? Int } == [1500, 3000])
        }
    }

    /// songLyrics v2: without `enhanced` the answer is v1's (word stamps taken out of the lines);
    /// with it, `kind` and each enhanced-LRC line's words as cues with their UTF-8 byte ranges.
    @Test func enhancedLyricsGiveTimedWords() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let edited = try fixture.shelf([
                "edit", "1", "--set",
                "lyrics=[00:01.00]<00:01.00>目を <00:01.50>開けて<00:02.40>\n[00:03.00]<00:03.00>Hello <00:03.40>world\n[00:05.00]Oh <00:05.50>love <00:nan>x\n[00:1e300]y",
            ])
            try #require(edited.status == 0, "\(edited.stderr)")
            let server = try InProcessServer(directory: fixture.library)
            let client = SubsonicClient(server)
            func structured(_ extra: [(String, String)]) throws -> [String: Any] {
                let list = try #require(try client.ok("getLyricsBySongId", [("id", "tr-1")] + extra)["lyricsList"] as? [String: Any])
                return try #require((list["structuredLyrics"] as? [[String: Any]])?.first)
            }
            let plain = try structured([])
            // A stamp that is no time (nan, 1e300) is text, never a crash.
            #expect(((plain["line"] as? [[String: Any]]) ?? []).compactMap { $0["value"] as? String } == ["目を 開けて", "Hello world", "Oh love <00:nan>x"])
            #expect(plain["kind"] == nil && plain["cueLine"] == nil)
            let rich = try structured([("enhanced", "true")])
            #expect(rich["kind"] as? String == "main")
            let cueLines = try #require(rich["cueLine"] as? [[String: Any]])
            #expect(cueLines.compactMap { $0["index"] as? Int } == [0, 1, 2] && cueLines.first?["value"] as? String == "目を 開けて")
            #expect(cueLines.first?["start"] as? Int == 1000 && cueLines.first?["end"] as? Int == 2400)
            let cues = try #require(cueLines.first?["cue"] as? [[String: Any]])
            #expect(cues.compactMap { $0["value"] as? String } == ["目を", "開けて"])
            #expect(cues.compactMap { $0["byteStart"] as? Int } == [0, 7] && cues.compactMap { $0["byteEnd"] as? Int } == [5, 15])
            #expect(cues.compactMap { $0["start"] as? Int } == [1000, 1500] && cues.compactMap { $0["end"] as? Int } == [1500, 2400])
            // A line's last word ends where the next line starts; untimed text before a word counts in its bytes.
            let world = try #require((cueLines[1]["cue"] as? [[String: Any]])?.last)
            #expect(world["value"] as? String == "world" && world["byteStart"] as? Int == 6 && world["byteEnd"] as? Int == 10 && world["end"] as? Int == 5000)
            let love = try #require((cueLines[2]["cue"] as? [[String: Any]])?.first)
            #expect(love["value"] as? String == "love" && love["byteStart"] as? Int == 3 && love["byteEnd"] as? Int == 6)
            #expect(try client.errorCode("getLyricsBySongId", [("id", "tr-1"), ("enhanced", "maybe")]) == 0)
            let xml = try client.raw("getLyricsBySongId", [("id", "tr-1"), ("enhanced", "true")]).text
            #expect(
                xml.contains(
                    "<cueLine index=\"0\" start=\"1000\" end=\"2400\" value=\"目を 開けて\"><cue start=\"1000\" end=\"1500\" byteStart=\"0\" byteEnd=\"5\">目を</cue>")
            )
        }
    }

    @Test func everyAuthMethodAndItsErrors() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let clear = SubsonicClient(server)
            let ping = try clear.ok("ping")
            #expect(ping["version"] as? String == "1.16.1")
            #expect(ping["type"] as? String == "shelf")
            #expect(ping["openSubsonic"] as? Bool == true)
            #expect(ping["serverVersion"] is String)

            let hex = Data(ServedLibrary.annPassword.utf8).map { String(format: "%02x", $0) }.joined()
            _ = try SubsonicClient(server, auth: [("u", "ann"), ("p", "enc:" + hex)]).ok("ping")
            let salt = "c19b2d"
            let token = Library.subsonicToken(password: ServedLibrary.bobPassword, salt: salt)
            #expect(Library.subsonicToken(password: "sesame", salt: "c19b2d") == "26719a1196d2a940705a59634eb18eab")
            _ = try SubsonicClient(server, auth: [("u", "bob"), ("t", token), ("s", salt)]).ok("ping")
            // An old client's POST with a form body (formPost) is the same call.
            let posted = try clear.curl.request(
                "POST", "/rest/ping", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data(SubsonicClient.encode([("u", "bob"), ("t", token), ("s", salt), ("f", "json")]).utf8))
            #expect(((posted.json as? [String: Any])?["subsonic-response"] as? [String: Any])?["status"] as? String == "ok")

            let key = try #require((try fixture.json(["user", "key", "bob"]) as? [String: Any])?["key"] as? String)
            let byKey = SubsonicClient(server, auth: [("apiKey", key)])
            _ = try byKey.ok("ping")
            #expect(try SubsonicClient(server, auth: [("apiKey", key), ("u", "bob")]).errorCode("ping") == 43)
            #expect(try SubsonicClient(server, auth: [("apiKey", "nonsense")]).errorCode("ping") == 44)
            #expect(try SubsonicClient(server, auth: [("u", "bob"), ("t", token), ("s", "other")]).errorCode("ping") == 40)
            #expect(try SubsonicClient(server, auth: [("u", "ann"), ("p", "enc:zz")]).errorCode("ping") == 40)
            #expect(try SubsonicClient(server, auth: [("u", "nobody"), ("p", "x")]).errorCode("ping") == 40)
            #expect(try SubsonicClient(server, auth: []).errorCode("ping") == 10)
            // tokenInfo (apiKeyAuthentication) names the key's user, and needs the key itself.
            #expect((try byKey.ok("tokenInfo")["tokenInfo"] as? [String: Any])?["username"] as? String == "bob")
            #expect(try clear.errorCode("tokenInfo") == 42)

            // Without credentials: the extension list only.
            let extensions = try SubsonicClient(server, auth: []).ok("getOpenSubsonicExtensions")
            let names = ((extensions["openSubsonicExtensions"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
            #expect(
                Set(names) == [
                    "formPost", "apiKeyAuthentication", "transcodeOffset", "songLyrics", "indexBasedQueue", "playbackReport", "getPodcastEpisode",
                    "transcoding", "shelfSync", "shelfAlphabetIndex",
                ])

            // The jukebox, off unless `--jukebox`: a failed body saying so.
            let off = try clear.raw("jukeboxControl", [("action", "status")])
            #expect(off.status == 200 && off.text.contains("status=\"failed\"") && off.text.contains("--jukebox"))
            // Never (video, chat): 410; a name the spec does not have: 404; both failed bodies.
            let video = try clear.raw("getVideos")
            #expect(video.status == 410)
            #expect(video.text.contains("status=\"failed\""))
            #expect(try clear.raw("getChatMessages", [("f", "json")]).status == 410)
            #expect(try clear.raw("noSuchEndpoint").status == 404)
            // Admin-only endpoints are refused to others by the registry (error 50).
            #expect(try SubsonicClient(server, auth: [("apiKey", key)]).errorCode("startScan") == 50)
            let badFormat = try clear.raw("ping", [("f", "yaml")])
            #expect(badFormat.status == 200)
            #expect(badFormat.text.contains("<error code=\"0\""))
            let jsonp = try clear.raw("ping", [("f", "jsonp"), ("callback", "cb.x$1")])
            #expect(jsonp.text.hasPrefix("cb.x$1({\"subsonic-response\":"))
            #expect(try clear.raw("ping", [("f", "jsonp"), ("callback", "alert(1)//")]).text.contains("status=\"failed\""))

            // Failed sign-ins are throttled per address as on /api/: ten a minute, counted with the
            // attempts in flight, so twenty wrong passwords sent at once over real connections
            // (curl --parallel) have at most ten checked (eleven were, before). The failures above
            // may have left the window on a slow machine, so these alone must reach the limit.
            let url = "\(server.base)/rest/ping?u=ann&p=guess&v=1.16.1&c=burst"
            let burst = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-s", "--parallel", "--parallel-immediate", "--parallel-max", "20", "-w", "%{http_code}\n"]
                    + Array(repeating: ["-o", "/dev/null", url], count: 20).flatMap { $0 })
            let codes = burst.stdout.split(separator: "\n").map(String.init)
            #expect(codes.count == 20 && codes.filter { $0 == "200" }.count <= 10, "\(codes)")
            #expect(codes.filter { $0 == "429" }.count >= 10, "\(codes)")
            let limited = try SubsonicClient(server, auth: [("u", "ann"), ("p", "guess")]).raw("ping")
            #expect(limited.status == 429 && limited.text.contains("status=\"failed\""))
            #expect(try clear.raw("ping").status == 429)
        }
    }

    @Test func browsingListsAndTheJapaneseIndex() async throws {
        try await offCooperativePool {
            let fixture = try Self.fixture()
            defer { fixture.remove() }
            // Browsing by tags: getIndexes is then getArtists' index with lastModified (folder
            // browsing, the default, is LibraryAccessTests' and the PyPI client's).
            let server = try InProcessServer(directory: fixture.library) { $0.browseFolders = false }
            let ann = SubsonicClient(server)

            let artists = try #require(try ann.ok("getArtists")["artists"] as? [String: Any])
            #expect(artists["ignoredArticles"] as? String == "the a an")
            let indexes = try #require(artists["index"] as? [[String: Any]])
            let row = try #require(indexes.first { $0["name"] as? String == "あ" }, "\(indexes.map { $0["name"] ?? "" })")
            let ogura = try #require((row["artist"] as? [[String: Any]])?.first { $0["name"] as? String == "小倉唯" })
            #expect(ogura["sortName"] as? String != nil)
            #expect(!indexes.contains { ($0["name"] as? String) == "小" })
            let everyArtist = indexes.flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }
            #expect(everyArtist.allSatisfy { $0["sortName"] != nil && ($0["id"] as? String)?.hasPrefix("ar-") == true })
            let classic = try #require(try ann.ok("getIndexes")["indexes"] as? [String: Any])
            let modified = try #require(classic["lastModified"] as? Int)
            #expect(modified > 0)
            #expect((classic["index"] as? [[String: Any]])?.count == indexes.count)
            // A client that has the index since the last write gets none; an older copy gets it all.
            let unchanged = try #require(try ann.ok("getIndexes", [("ifModifiedSince", "\(modified)")])["indexes"] as? [String: Any])
            #expect(unchanged["index"] == nil && unchanged["lastModified"] as? Int == modified)
            let stale = try #require(try ann.ok("getIndexes", [("ifModifiedSince", "\(modified - 1)")])["indexes"] as? [String: Any])
            #expect((stale["index"] as? [[String: Any]])?.count == indexes.count)
            #expect(try ann.errorCode("getIndexes", [("ifModifiedSince", "yesterday")]) == 0)

            // Artist → albums → songs.
            let artistID = try #require(ogura["id"] as? String)
            let artist = try #require(try ann.ok("getArtist", [("id", artistID)])["artist"] as? [String: Any])
            let albums = try #require(artist["album"] as? [[String: Any]])
            #expect(!albums.isEmpty)
            let albumID = try #require(albums.first?["id"] as? String)
            let album = try #require(try ann.ok("getAlbum", [("id", albumID)])["album"] as? [String: Any])
            let songs = try #require(album["song"] as? [[String: Any]])
            #expect(songs.contains { $0["id"] as? String == "tr-1" })
            #expect(songs.allSatisfy { $0["albumId"] as? String == albumID && $0["sortName"] != nil })
            let song = try #require(try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            #expect(song["artistId"] as? String == artistID)
            #expect(song["duration"] is Int)
            #expect(try ann.ok("getGenres")["genres"] is [String: Any])
            #expect(try ann.ok("getMusicFolders")["musicFolders"] is [String: Any])
            #expect(try ann.ok("getLicense")["license"] is [String: Any])
            #expect(try ann.ok("getScanStatus")["scanStatus"] is [String: Any])

            // XML and JSON are one model.
            for (name, parameters) in [("getAlbum", [("id", albumID)]), ("getArtists", []), ("search3", [("query", "")]), ("getSong", [("id", "tr-2")])] {
                let json = try #require(try ann.raw(name, parameters + [("f", "json")]).json as? [String: Any])
                let xml = try xmlTree(try ann.raw(name, parameters).body)
                let fromJSON = try #require((normalized(json) as? [String: Any])?["subsonic-response"] as? [Any]).first
                #expect(NSDictionary(dictionary: xml).isEqual(to: fromJSON as? [String: Any] ?? [:]), "\(name)")
            }

            // Album lists: every type answers; alphabeticalByName pages join up to the whole view.
            let total = try #require((try fixture.json(["albums", "--limit", "1000"]) as? [String: Any])?["total"] as? Int)
            var names: [String] = []
            for offset in stride(from: 0, to: total + 3, by: 3) {
                let page = try ann.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "3"), ("offset", "\(offset)")])
                names += ((page["albumList2"] as? [String: Any])?["album"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            }
            #expect(names.count == total && Set(names).count == total)
            for type in ["alphabeticalByArtist", "newest", "random", "frequent", "recent", "highest", "starred"] {
                let list = try ann.ok("getAlbumList2", [("type", type), ("size", "500")])
                #expect(list["albumList2"] is [String: Any], "\(type)")
            }
            let newest = try ann.ok("getAlbumList2", [("type", "newest"), ("size", "500")])
            #expect(((newest["albumList2"] as? [String: Any])?["album"] as? [Any])?.count == total)
            var byArtist: [String] = []
            var owners: [String] = []
            for offset in stride(from: 0, to: total + 2, by: 2) {
                let page = try ann.ok("getAlbumList2", [("type", "alphabeticalByArtist"), ("size", "2"), ("offset", "\(offset)")])
                let albums = (page["albumList2"] as? [String: Any])?["album"] as? [[String: Any]] ?? []
                byArtist += albums.compactMap { $0["id"] as? String }
                owners += albums.map { ($0["artist"] as? String ?? "").lowercased() }
            }
            #expect(byArtist.count == total && Set(byArtist) == Set(names))
            // By album artist: each artist's albums side by side (in the order of their sort names:
            // 小倉唯 is read おぐらゆい, before くるり).
            let runs = owners.enumerated().filter { $0.offset == 0 || owners[$0.offset - 1] != $0.element }.map(\.element)
            #expect(runs.count == Set(owners).count && runs.first == "小倉唯" && runs.last == "[unknown artist]", "\(owners)")
            _ = try ann.ok("getAlbumList2", [("type", "byYear"), ("fromYear", "2100"), ("toYear", "1900")])
            _ = try ann.ok("getAlbumList2", [("type", "byGenre"), ("genre", "Rock")])
            let legacy = try ann.ok("getAlbumList", [("type", "alphabeticalByName"), ("size", "1")])
            #expect(((legacy["albumList"] as? [String: Any])?["album"] as? [[String: Any]])?.first?["isDir"] as? Bool == true)
            #expect(try ann.errorCode("getAlbumList2", [("type", "sideways")]) == 0)
            #expect(try ann.errorCode("getAlbumList2", []) == 10)
            #expect(try ann.errorCode("getAlbumList2", [("type", "newest"), ("size", "501")]) == 0)
            #expect(try ann.errorCode("getAlbumList2", [("type", "newest"), ("offset", "-1")]) == 0)

            // search3 "" syncs everything, every song once, at 500 a page and at 5.
            let trackCount = 12
            for pageSize in [500, 5] {
                var seen: [String] = []
                var offset = 0
                while true {
                    let page = try ann.ok(
                        "search3", [("query", "\"\""), ("songCount", "\(pageSize)"), ("songOffset", "\(offset)"), ("artistCount", "0"), ("albumCount", "0")])
                    let songs = ((page["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
                    seen += songs.compactMap { $0["id"] as? String }
                    if songs.count < pageSize { break }
                    offset += pageSize
                }
                #expect(seen.count == trackCount && Set(seen).count == trackCount, "page \(pageSize)")
            }
            let found = try ann.ok("search3", [("query", "小倉")])
            #expect(((found["searchResult3"] as? [String: Any])?["artist"] as? [[String: Any]])?.first?["name"] as? String == "小倉唯")
            #expect(try ann.errorCode("search2", []) == 10)
            let random = try ann.ok("getRandomSongs", [("size", "5")])
            #expect(((random["randomSongs"] as? [String: Any])?["song"] as? [Any])?.count == 5)

            // Bad input.
            #expect(try ann.errorCode("getAlbum", []) == 10)
            #expect(try ann.errorCode("getAlbum", [("id", "al-1")]) == 70)
            #expect(try ann.errorCode("getAlbum", [("id", "tr-1")]) == 70)
            #expect(try ann.errorCode("getSong", [("id", "tr-999999")]) == 70)
            #expect(try ann.errorCode("getSong", [("id", "12")]) == 70)
            #expect(try ann.errorCode("getArtist", [("id", "ar-x")]) == 70)
        }
    }

    @Test func mediaAnnotationAndPlaylists() async throws {
        try await offCooperativePool {
            let fixture = try Self.fixture()
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])

            let whole = try ann.raw("download", [("id", "tr-2")])
            #expect(whole.status == 200 && whole.body.count > 100)
            let part = try ann.raw("stream", [("id", "tr-2")], headers: ["Range": "bytes=0-9"])
            #expect(part.status == 206 && part.body == whole.body.prefix(10))
            let transcoded = try ann.raw("stream", [("id", "tr-2"), ("format", "mp3"), ("maxBitRate", "96"), ("timeOffset", "1")])
            #expect(transcoded.status == 200 && transcoded.headers["content-type"] == "audio/mpeg" && !transcoded.body.isEmpty)
            #expect(transcoded.headers["content-length"] == nil)
            // estimateContentLength: the length the duration left at the bit rate gives, and exactly
            // that many bytes (the transcode cut or made up to it).
            let songTwo = try #require(try ann.ok("getSong", [("id", "tr-2")])["song"] as? [String: Any])
            let duration = try #require(try fixture.json(["track", "2"]) as? [String: Any])["duration"] as? Double
            let estimated = try ann.raw("stream", [("id", "tr-2"), ("format", "mp3"), ("maxBitRate", "96"), ("estimateContentLength", "true")])
            let expectedLength = Int(((try #require(duration)) * 96_000 / 8).rounded(.up))
            #expect(songTwo["duration"] is Int)
            #expect(estimated.status == 200 && estimated.headers["content-length"] == String(expectedLength))
            #expect(estimated.body.count == expectedLength)
            #expect(estimated.body.prefix(3) == Data("ID3".utf8) || estimated.body.first == 0xFF)
            // Binary endpoints' errors follow f.
            let missingSong = try ann.raw("stream", [("id", "tr-99999"), ("f", "json")])
            #expect(((missingSong.json as? [String: Any])?["subsonic-response"] as? [String: Any])?["status"] as? String == "failed")
            #expect(try ann.raw("download", [("id", "tr-99999")]).text.contains("code=\"70\""))

            let song = try #require(try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            for id in ["tr-1", try #require(song["albumId"] as? String), try #require(song["artistId"] as? String)] {
                let picture = try ann.raw("getCoverArt", [("id", id), ("size", "64")])
                #expect(picture.status == 200 && picture.headers["content-type"] == "image/jpeg", "\(id)")
            }
            #expect(try ann.errorCode("getCoverArt", [("id", "tr-1"), ("size", "99999999")]) == 0)
            #expect(try ann.errorCode("getCoverArt", []) == 10)

            // Lyrics from the tags: LRC timestamps make synced lines.
            let lyricsList = try #require(try ann.ok("getLyricsBySongId", [("id", "tr-2")])["lyricsList"] as? [String: Any])
            let structured = try #require((lyricsList["structuredLyrics"] as? [[String: Any]])?.first)
            #expect(structured["synced"] as? Bool == true)
            let lines = (structured["line"] as? [[String: Any]]) ?? []
            #expect(lines.compactMap { $0["start"] as? Int } == [1500, 3000] && lines.first?["value"] as? String == "Hello")
            #expect((try ann.ok("getLyricsBySongId", [("id", "tr-3")])["lyricsList"] as? [String: Any])?["structuredLyrics"] == nil)
            #expect(try ann.errorCode("getLyricsBySongId", [("id", "al-3")]) == 70)
            let genre = try #require(song["genre"] as? String)
            let byGenre = try ann.ok("getSongsByGenre", [("genre", genre), ("count", "500")])
            let genreSongs = ((byGenre["songsByGenre"] as? [String: Any])?["song"] as? [Any])?.count ?? 0
            #expect(genreSongs == 12)
            _ = try ann.ok("getTopSongs", [("artist", "小倉唯")])
            // By the artist's ID as well as its name: the same songs (played ones, so one is played first).
            _ = try ann.ok("scrobble", [("id", "tr-1")])
            let topArtistID = try #require(song["artistId"] as? String)
            let artistName = try #require((try ann.ok("getArtist", [("id", topArtistID)])["artist"] as? [String: Any])?["name"] as? String)
            let byName = ((try ann.ok("getTopSongs", [("artist", artistName)])["topSongs"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            let byID = ((try ann.ok("getTopSongs", [("id", topArtistID)])["topSongs"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            #expect(byID.compactMap { $0["id"] as? String } == byName.compactMap { $0["id"] as? String })
            #expect(try ann.errorCode("getTopSongs", [("id", "ar-1")]) == 70)
            _ = try ann.ok("getNowPlaying")
            _ = try ann.ok("getArtistInfo2", [("id", try #require(song["artistId"] as? String))])

            // Stars, ratings and plays are each user's own.
            _ = try bob.ok("star", [("id", "tr-3"), ("id", "tr-4")])
            _ = try bob.ok("setRating", [("id", "tr-3"), ("rating", "4")])
            _ = try bob.ok("scrobble", [("id", "tr-3"), ("time", "1700000000000")])
            _ = try bob.ok("scrobble", [("id", "tr-3"), ("submission", "false")])
            // Not a play, but what bob is playing now, seen by everyone.
            let playing = ((try ann.ok("getNowPlaying")["nowPlaying"] as? [String: Any])?["entry"] as? [[String: Any]]) ?? []
            #expect(playing.count == 1 && playing.first?["id"] as? String == "tr-3" && playing.first?["username"] as? String == "bob")
            #expect((playing.first?["minutesAgo"] as? Int ?? -1) >= 0 && playing.first?["playerName"] as? String == "test")
            let starred = try bob.ok("getStarred2")
            let bobSongs = ((starred["starred2"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            #expect(Set(bobSongs.compactMap { $0["id"] as? String }) == ["tr-3", "tr-4"])
            let three = try #require(bobSongs.first { $0["id"] as? String == "tr-3" })
            #expect(three["userRating"] as? Int == 4 && three["playCount"] as? Int == 1 && three["starred"] is String)
            #expect(((try ann.ok("getStarred2")["starred2"] as? [String: Any])?["song"]) == nil)
            _ = try bob.ok("unstar", [("id", "tr-4")])
            #expect((((try bob.ok("getStarred")["starred"] as? [String: Any])?["song"] as? [Any]) ?? []).count == 1)
            #expect(try bob.errorCode("star", []) == 10)
            #expect(try bob.errorCode("star", [("id", "tr-99999")]) == 70)

            // Bob's frequent, recent and highest lists come from his own plays and ratings.
            let threeAlbum = try #require(three["albumId"] as? String)
            for type in ["frequent", "recent", "highest"] {
                let list = try bob.ok("getAlbumList2", [("type", type)])
                #expect(
                    (((list["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == [threeAlbum], "\(type)"
                )
                let paged = try bob.ok("getAlbumList2", [("type", type), ("offset", "1")])
                let rest = ((paged["albumList2"] as? [String: Any])?["album"] as? [Any]) ?? []
                #expect(rest.isEmpty)
            }

            // The owner's are the tracks' own numbers, which the mirror sorts by.
            _ = try ann.ok("setRating", [("id", "tr-5"), ("rating", "5")])
            let fiveAlbum = try #require((try ann.ok("getSong", [("id", "tr-5")])["song"] as? [String: Any])?["albumId"] as? String)
            let annHighest = try ann.ok("getAlbumList2", [("type", "highest")])
            #expect((((annHighest["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]) ?? []).first?["id"] as? String == fiveAlbum)

            // Albums and artists are starred per user too, by albumId/artistId or by id.
            let albumID = try #require(song["albumId"] as? String)
            let artistID = try #require(song["artistId"] as? String)
            _ = try bob.ok("star", [("albumId", albumID), ("artistId", artistID)])
            let groups = try #require(try bob.ok("getStarred2")["starred2"] as? [String: Any])
            #expect(((groups["album"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == [albumID])
            #expect(((groups["artist"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == [artistID])
            #expect(((groups["album"] as? [[String: Any]])?.first?["starred"]) is String)
            #expect((try bob.ok("getAlbum", [("id", albumID)])["album"] as? [String: Any])?["starred"] is String)
            // The artist index (rendered once per library state) shows each user's own stars.
            func indexedArtist(_ client: SubsonicClient) throws -> [String: Any]? {
                let indexes = ((try client.ok("getArtists")["artists"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []
                return indexes.flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }.first { $0["id"] as? String == artistID }
            }
            #expect(try indexedArtist(bob)?["starred"] is String)
            #expect(try indexedArtist(ann)?["starred"] == nil)
            #expect((try ann.ok("getAlbum", [("id", albumID)])["album"] as? [String: Any])?["starred"] == nil)
            let starredList = try bob.ok("getAlbumList2", [("type", "starred")])
            #expect((((starredList["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == [albumID])
            #expect(try bob.errorCode("star", [("albumId", "al-12345")]) == 70)
            #expect(try bob.errorCode("star", [("albumId", "tr-3")]) == 70)
            #expect(try bob.errorCode("star", [("artistId", albumID)]) == 70)
            _ = try bob.ok("unstar", [("id", albumID), ("id", artistID)])
            let cleared = try #require(try bob.ok("getStarred2")["starred2"] as? [String: Any])
            #expect(cleared["album"] == nil && cleared["artist"] == nil && cleared["song"] != nil)
            #expect(try indexedArtist(bob)?["starred"] == nil)
            // A write from another process shows in the next index.
            let renamed = try fixture.shelf(["edit", "4", "--set", "albumArtist=Zz Newcomer"])
            try #require(renamed.status == 0, "\(renamed.stderr)")
            let after = ((try bob.ok("getArtists")["artists"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []
            #expect(after.flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }.contains { $0["name"] as? String == "Zz Newcomer" })
            #expect(try bob.errorCode("setRating", [("id", "tr-3"), ("rating", "9")]) == 0)

            // Playlists: owners and public flags.
            let created = try bob.ok("createPlaylist", [("name", "Bob's"), ("songId", "tr-1"), ("songId", "tr-2")])
            let playlist = try #require(created["playlist"] as? [String: Any])
            let id = try #require(playlist["id"] as? String)
            #expect(playlist["owner"] as? String == "bob" && playlist["songCount"] as? Int == 2)
            #expect(((playlist["entry"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == ["tr-1", "tr-2"])
            _ = try bob.ok("updatePlaylist", [("playlistId", id), ("songIdToAdd", "tr-5"), ("songIndexToRemove", "0"), ("name", "Bob's mix")])
            let updated = try #require(try bob.ok("getPlaylist", [("id", id)])["playlist"] as? [String: Any])
            #expect(updated["name"] as? String == "Bob's mix")
            #expect(((updated["entry"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String } == ["tr-2", "tr-5"])
            // Ann (an admin) sees it; a second plain user would not until it is public.
            #expect(try fixture.shelf(["user", "add", "cy", "--password-stdin"], stdin: "cy-pass\n").status == 0)
            let cy = SubsonicClient(server, auth: [("u", "cy"), ("p", "cy-pass")])
            #expect(try cy.errorCode("getPlaylist", [("id", id)]) == 70)
            _ = try bob.ok("updatePlaylist", [("playlistId", id), ("public", "true")])
            _ = try cy.ok("getPlaylist", [("id", id)])
            #expect(try cy.errorCode("deletePlaylist", [("id", id)]) == 50)
            let listed = ((try bob.ok("getPlaylists")["playlists"] as? [String: Any])?["playlist"] as? [[String: Any]]) ?? []
            #expect(listed.contains { $0["id"] as? String == id })
            _ = try bob.ok("createPlaylist", [("playlistId", id), ("songId", "tr-7")])
            #expect((try bob.ok("getPlaylist", [("id", id)])["playlist"] as? [String: Any])?["songCount"] as? Int == 1)
            #expect(try ann.raw("getCoverArt", [("id", id)]).status == 200)
            _ = try bob.ok("deletePlaylist", [("id", id)])
            #expect(try bob.errorCode("getPlaylist", [("id", id)]) == 70)
            #expect(try bob.errorCode("updatePlaylist", [("playlistId", "pl-999")]) == 70)
            #expect(try bob.errorCode("createPlaylist", []) == 10)
        }
    }

    /// The PyPI client (py-opensonic, in the project's `.venv` made by `make subsonic-client`)
    /// drives the server with token and API-key authentication; skipped when the venv is absent.
    @Test func thePyPIClientIsServed() async throws {
        try await offCooperativePool {
            let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".venv/bin/python")
            guard FileManager.default.isExecutableFile(atPath: python.path) else {
                print("SubsonicTests: no .venv (run make subsonic-client); the py-opensonic suite is skipped")
                return
            }
            let fixture = try Self.fixture()
            defer { fixture.remove() }
            let key = try #require((try fixture.json(["user", "key", "bob"]) as? [String: Any])?["key"] as? String)
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "subsonic_client_test.py")
            let result = try ChildProcess.run(python, [script.path, "http://127.0.0.1", "\(server.port)", "ann", ServedLibrary.annPassword, key, "12"])
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        }
    }

    /// A saved queue is the library's: it is there after the server restarts, and a track deleted
    /// since is gone from it (with the current song, when that was the one).
    @Test func playQueueSurvivesARestartAndDeletions() async throws {
        try await offCooperativePool {
            let fixture = try Self.fixture()
            defer { fixture.remove() }
            do {
                let server = try ServerProcess(library: fixture.library)
                defer { server.stop() }
                _ = try SubsonicClient(server).ok(
                    "savePlayQueue", [("id", "tr-3"), ("id", "tr-1"), ("id", "tr-2"), ("current", "tr-2"), ("position", "1500"), ("c", "phone")])
            }
            let deleted = try fixture.shelf(["delete", "2"])
            try #require(deleted.status == 0, "\(deleted.stderr)")
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let queue = try #require(try SubsonicClient(server).ok("getPlayQueue")["playQueue"] as? [String: Any])
            #expect((queue["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tr-3", "tr-1"])
            #expect(queue["current"] == nil)
            #expect(queue["position"] as? Int == 1_500)
            #expect(queue["changedBy"] as? String == "phone")
        }
    }

    @Test func playQueueAndMusicDirectory() async throws {
        try await offCooperativePool {
            let fixture = try Self.fixture()
            defer { fixture.remove() }
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])

            // Nothing saved yet: an answer without a queue.
            #expect(try ann.ok("getPlayQueue")["playQueue"] == nil)
            _ = try ann.ok("savePlayQueue", [("id", "tr-3"), ("id", "tr-1"), ("id", "tr-2"), ("current", "tr-1"), ("position", "61500"), ("c", "phone")])
            let queue = try #require(try ann.ok("getPlayQueue")["playQueue"] as? [String: Any])
            #expect(queue["current"] as? String == "tr-1")
            #expect(queue["position"] as? Int == 61_500)
            #expect(queue["username"] as? String == "ann")
            #expect(queue["changedBy"] as? String == "phone")
            #expect(queue["changed"] is String)
            #expect((queue["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tr-3", "tr-1", "tr-2"])
            // Per user: bob's is his own.
            #expect(try bob.ok("getPlayQueue")["playQueue"] == nil)
            _ = try bob.ok("savePlayQueue", [("id", "tr-4")])
            #expect(((try ann.ok("getPlayQueue")["playQueue"] as? [String: Any])?["entry"] as? [Any])?.count == 3)
            // Bad input leaves the saved queue alone; no songs clears it.
            #expect(try ann.errorCode("savePlayQueue", [("id", "tr-1"), ("current", "tr-2")]) == 0)
            #expect(try ann.errorCode("savePlayQueue", [("id", "tr-999999")]) == 70)
            #expect(try ann.errorCode("savePlayQueue", [("id", "al-1")]) == 70)
            #expect(try ann.errorCode("savePlayQueue", [("id", "tr-1"), ("position", "-5")]) == 0)
            #expect(((try ann.ok("getPlayQueue")["playQueue"] as? [String: Any])?["entry"] as? [Any])?.count == 3)
            _ = try ann.ok("savePlayQueue")
            #expect(try ann.ok("getPlayQueue")["playQueue"] == nil)

            // getMusicDirectory takes the ID3 endpoints' artist and album IDs (in either browse
            // mode): artist → albums → songs.
            let indexes = try #require((try ann.ok("getArtists")["artists"] as? [String: Any])?["index"] as? [[String: Any]])
            let artist = try #require(indexes.first?["artist"] as? [[String: Any]])[0]
            let artistID = try #require(artist["id"] as? String)
            let directory = try #require(try ann.ok("getMusicDirectory", [("id", artistID)])["directory"] as? [String: Any])
            #expect(directory["id"] as? String == artistID)
            #expect(directory["name"] as? String == artist["name"] as? String)
            let albums = try #require(directory["child"] as? [[String: Any]])
            #expect(!albums.isEmpty && albums.allSatisfy { $0["isDir"] as? Bool == true && $0["parent"] as? String == artistID })
            let tagAlbums = try #require((try ann.ok("getArtist", [("id", artistID)])["artist"] as? [String: Any])?["album"] as? [[String: Any]])
            #expect(albums.compactMap { $0["id"] as? String } == tagAlbums.compactMap { $0["id"] as? String })
            let albumID = try #require(albums[0]["id"] as? String)
            let folder = try #require(try ann.ok("getMusicDirectory", [("id", albumID)])["directory"] as? [String: Any])
            #expect(folder["parent"] as? String == artistID)
            let songs = try #require(folder["child"] as? [[String: Any]])
            let tagSongs = try #require((try ann.ok("getAlbum", [("id", albumID)])["album"] as? [String: Any])?["song"] as? [[String: Any]])
            #expect(songs.compactMap { $0["id"] as? String } == tagSongs.compactMap { $0["id"] as? String })
            #expect(songs.allSatisfy { $0["isDir"] as? Bool == false && $0["parent"] as? String == albumID })
            #expect(try ann.errorCode("getMusicDirectory") == 10)
            #expect(try ann.errorCode("getMusicDirectory", [("id", "tr-1")]) == 70)
            #expect(try ann.errorCode("getMusicDirectory", [("id", "ar-1")]) == 70)
            // XML carries the same directory.
            let xml = try xmlTree(try ann.raw("getMusicDirectory", [("id", albumID)]).body)
            #expect(((xml["directory"] as? [[String: Any]])?.first?["child"] as? [Any])?.count == songs.count)
        }
    }

    @Test func startScanImportsTheMusicFoldersAndGetScanStatusFollows() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 3)
            defer { fixture.remove() }
            // Files the library does not have yet, under the folder the server is told about.
            let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
            let added = URL(fileURLWithPath: fixture.music).appendingPathComponent("added").path
            // Longer than the fixture's files, so not the same audio (which the import would take for them).
            try #require(try ChildProcess.run(bench, ["sample-files", "--tracks", "5", "--dir", added, "--seconds", "0.5"]).status == 0)
            let server = try ServerProcess(library: fixture.library, arguments: ["--music", fixture.music])
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])
            let before = try #require(try ann.ok("getScanStatus")["scanStatus"] as? [String: Any])
            #expect(before["scanning"] as? Bool == false)
            #expect(before["count"] as? Int == 3)
            #expect(try bob.errorCode("startScan") == 50)
            let started = try #require(try ann.ok("startScan")["scanStatus"] as? [String: Any])
            #expect(started["scanning"] is Bool)
            // Never 0 while the scan has not read a file yet: at least the library's tracks.
            #expect((started["count"] as? Int ?? 0) >= 3, "\(started)")
            // Polled until it ends (bounded: a hung import fails the test rather than hanging it).
            let deadline = Date().addingTimeInterval(60)
            var status = started
            while status["scanning"] as? Bool == true, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                status = try #require(try ann.ok("getScanStatus")["scanStatus"] as? [String: Any])
            }
            #expect(status["scanning"] as? Bool == false)
            #expect(status["count"] as? Int == 8)

            // One music folder per library (the one an import makes is Music); musicFolderId
            // narrows song lists to it, an unknown one is 70.
            let folders = try #require((try ann.ok("getMusicFolders")["musicFolders"] as? [String: Any])?["musicFolder"] as? [[String: Any]])
            #expect(folders.count == 1 && folders.first?["id"] as? Int == 1)
            #expect(folders.first?["name"] as? String == "Music")
            let inFolder = try ann.ok("getRandomSongs", [("size", "50"), ("musicFolderId", "1")])
            #expect((((inFolder["randomSongs"] as? [String: Any])?["song"] as? [Any]) ?? []).count == 8)
            #expect(try ann.errorCode("getRandomSongs", [("musicFolderId", "2")]) == 70)
            #expect(try ann.errorCode("getAlbumList2", [("type", "newest"), ("musicFolderId", "x")]) == 70)
            let folderAlbums = try ann.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500"), ("musicFolderId", "1")])
            let allAlbums = try ann.ok("getAlbumList2", [("type", "alphabeticalByName"), ("size", "500")])
            func albumIDs(_ response: [String: Any]) -> [String] {
                (((response["albumList2"] as? [String: Any])?["album"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
            }
            #expect(!albumIDs(folderAlbums).isEmpty && Set(albumIDs(folderAlbums)) == Set(albumIDs(allAlbums)))
            #expect(
                try ann.ok("search3", [("query", ""), ("songCount", "500")])["searchResult3"].flatMap { ($0 as? [String: Any])?["song"] as? [Any] }?.count == 8)

            // A server told of no folders says how to tell it.
            let plain = try ServerProcess(library: fixture.library)
            defer { plain.stop() }
            let response = try SubsonicClient(plain).json("startScan")
            #expect(response["status"] as? String == "failed")
            #expect(((response["error"] as? [String: Any])?["message"] as? String)?.contains("--music") == true)
        }
    }

    /// A sync by pages while another process imports and deletes between them. "Exactly once" is
    /// for the songs that exist from the sync's first page to its last: each comes once. A song
    /// imported or deleted meanwhile may come or not, but never twice; nothing else ever comes.
    @Test func aSearchSyncSendsEverySongOnceWhileTheLibraryChanges() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 12)
            defer { fixture.remove() }
            let server = try InProcessServer(directory: fixture.library)
            let ann = SubsonicClient(server)
            let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
            func allIDs() throws -> Set<String> {
                let page = try ann.ok("search3", [("query", ""), ("songCount", "500"), ("artistCount", "0"), ("albumCount", "0")])
                return Set((((page["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String })
            }
            let initial = try allIDs()
            try #require(initial.count == 12)
            let deleted = ["tr-2", "tr-7", "tr-11"]
            var seen: [String] = []
            var offset = 0
            var step = 0
            while true {
                let page = try ann.ok(
                    "search3", [("query", "\"\""), ("songCount", "2"), ("songOffset", "\(offset)"), ("artistCount", "0"), ("albumCount", "0")])
                let songs = ((page["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
                seen += songs.compactMap { $0["id"] as? String }
                if songs.count < 2 { break }
                offset += 2
                // Between pages: new files imported by another process, or a track deleted by one.
                switch step {
                case 0, 2, 4:
                    let folder = URL(fileURLWithPath: fixture.root.path).appendingPathComponent("new-\(step)").path
                    // Each batch of its own length: identical audio would be taken for the tracks already there.
                    try #require(try ChildProcess.run(bench, ["sample-files", "--tracks", "3", "--dir", folder, "--seconds", "0.\(4 + step)"]).status == 0)
                    let imported = try fixture.shelf(["import", folder])
                    try #require(imported.status == 0, "\(imported.stderr)")
                case 1, 3, 5:
                    let deletedNow = try fixture.shelf(["delete", String(deleted[step / 2].dropFirst(3))])
                    try #require(deletedNow.status == 0, "\(deletedNow.stderr)")
                default: break
                }
                step += 1
                try #require(step < 100, "the sync does not end")
            }
            let final = try allIDs()
            #expect(final.count == 12 - 3 + 9)
            let throughout = initial.subtracting(deleted)
            let counts = Dictionary(seen.map { ($0, 1) }, uniquingKeysWith: +)
            for id in throughout { #expect(counts[id] == 1, "\(id) came \(counts[id] ?? 0) times") }
            #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.filter { $0.value > 1 })")
            #expect(Set(seen).isSubset(of: initial.union(final)))
        }
    }
}
