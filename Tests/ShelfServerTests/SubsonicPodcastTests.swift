import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// A feed server of the test's own on loopback (`Tests/podcast_feed_server.py`): real RSS and
/// Atom documents, real audio and a real PNG, and the broken cases (404, redirect loop,
/// truncated body).
final class FeedServer: @unchecked Sendable {
    let folder: URL
    let process = Process()
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init(folder: URL) throws {
        self.folder = folder
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("podcast_feed_server.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, folder.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port: the server listens before it prints it.
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "the feed server did not start"])
        }
        self.port = port
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Podcasts through a real server: channels from RSS and Atom feeds served on loopback, episodes
/// downloaded through libcurl, streamed with ranges, their covers, the limits and every failure
/// recorded on the channel or episode, private addresses refused unless allowed, the state kept
/// across a restart.
@Suite(.serialized) struct SubsonicPodcastTests {
    static func rss(title: String, items: [String]) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
        <channel>
          <title>\(title)</title>
          <description>Talks about &lt;b&gt;music&lt;/b&gt; libraries</description>
          <itunes:image href="{BASE}/cover.png"/>
          \(items.joined(separator: "\n  "))
        </channel>
        </rss>
        """
    }

    static func item(_ guid: String, _ title: String, _ date: String, enclosure: String?, duration: String = "00:03") -> String {
        let enclosureTag = enclosure.map { "<enclosure url=\"{BASE}/\($0)\" type=\"audio/mpeg\" length=\"1234\"/>" } ?? ""
        return """
            <item><title>\(title)</title><guid isPermaLink="false">\(guid)</guid><pubDate>\(date)</pubDate>
            <content:encoded><![CDATA[<p>Show notes of \(title)</p>]]></content:encoded>
            <itunes:duration>\(duration)</itunes:duration>\(enclosureTag)</item>
            """
    }

    @Test func podcastsAreFetchedDownloadedStreamedAndTheirFailuresReported() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let feeds = fixture.root.appendingPathComponent("feeds")
            try FileManager.default.createDirectory(at: feeds, withIntermediateDirectories: true)
            let episodeAudio = TestAudio.mp3(seconds: 3, seed: 7)
            try episodeAudio.write(to: feeds.appendingPathComponent("episode.mp3"))
            try TestAudio.mp3(seconds: 60, seed: 8).write(to: feeds.appendingPathComponent("big.mp3"))
            var pixels = [UInt8](repeating: 0, count: 32 * 32 * 4)
            for index in stride(from: 0, to: pixels.count, by: 4) {
                (pixels[index], pixels[index + 1], pixels[index + 2], pixels[index + 3]) = (200, 40, 90, 255)
            }
            try ImageCodec.encode(DecodedImage(width: 32, height: 32, bytesPerRow: 128, pixels: pixels), as: .png)
                .write(to: feeds.appendingPathComponent("cover.png"))
            let items = [
                Self.item("ep-1", "First", "Mon, 02 Nov 2026 10:00:00 +0000", enclosure: "episode.mp3"),
                Self.item("ep-2", "Cut short", "Tue, 03 Nov 2026 10:00:00 GMT", enclosure: "truncated/episode.mp3"),
                Self.item("ep-3", "Too big", "Wed, 04 Nov 2026 10:00:00 +0000", enclosure: "big.mp3", duration: "1:00"),
                Self.item("ep-4", "Loops", "Thu, 05 Nov 2026 10:00:00 +0000", enclosure: "redirect-loop"),
                Self.item("ep-5", "Words only", "Fri, 06 Nov 2026 10:00:00 +0000", enclosure: nil),
            ]
            try Self.rss(title: "Shelf Talk", items: items).write(to: feeds.appendingPathComponent("feed.xml"), atomically: true, encoding: .utf8)
            try """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Hour</title><subtitle>An Atom feed</subtitle>
            <entry><id>urn:uuid:1</id><title>Atomic</title><published>2026-11-20T08:30:00Z</published><summary>One entry</summary>
            <link rel="enclosure" href="{BASE}/episode.mp3" type="audio/mpeg" length="99"/></entry></feed>
            """.write(to: feeds.appendingPathComponent("atom.xml"), atomically: true, encoding: .utf8)
            try "<rss version=\"2.0\"><channel><title>Broken</channel></rss>".write(
                to: feeds.appendingPathComponent("malformed.xml"), atomically: true, encoding: .utf8)
            let feedServer = try FeedServer(folder: feeds)
            defer { feedServer.stop() }
            let base = feedServer.base
            let config = fixture.root.appendingPathComponent("shelf.toml")
            // Between the 3-second episode and the 60-second one.
            try "podcast-max-episode-size = \(episodeAudio.count * 4)\npodcast-refresh = \"off\"\n".write(to: config, atomically: true, encoding: .utf8)

            // Without --podcast-allow-private: a loopback feed is refused at once when the address is
            // literal, and when it is dialled otherwise (2130706433 is 127.0.0.1 written as one number).
            do {
                let server = try ServerProcess(library: fixture.library, arguments: ["--config", config.path])
                defer { server.stop() }
                let ann = SubsonicClient(server)
                let refused = try ann.json("createPodcastChannel", [("url", "\(base)/feed.xml")])
                #expect(refused["status"] as? String == "failed")
                #expect(((refused["error"] as? [String: Any])?["message"] as? String)?.contains("podcast-allow-private") == true)
                _ = try ann.ok("createPodcastChannel", [("url", "http://2130706433:\(feedServer.port)/feed.xml")])
                #expect(server.waitForLine { $0.contains("pc-1: could not fetch the feed") } != nil)
                let channel = try #require(((try ann.ok("getPodcasts")["podcasts"] as? [String: Any])?["channel"] as? [[String: Any]])?.first)
                #expect(channel["status"] as? String == "error")
                #expect((channel["errorMessage"] as? String)?.contains("refused to connect to 127.0.0.1") == true)
                _ = try ann.ok("deletePodcastChannel", [("id", "pc-1")])
            }

            let arguments = ["--config", config.path, "--podcast-allow-private"]
            var server = try ServerProcess(library: fixture.library, arguments: arguments)
            defer { server.stop() }
            var ann = SubsonicClient(server)
            // Bad input: each with the spec's code, nothing made.
            #expect(try ann.errorCode("createPodcastChannel") == 10)
            #expect(try ann.errorCode("createPodcastChannel", [("url", "ftp://example.org/feed.xml")]) == 0)
            #expect(try ann.errorCode("createPodcastChannel", [("url", "http://example.org/" + String(repeating: "a", count: 5000))]) == 0)
            #expect(try ann.errorCode("getPodcastEpisode", [("id", "tr-1")]) == 70)
            #expect(try ann.errorCode("getPodcastEpisode", [("id", "pe-999")]) == 70)
            #expect(try ann.errorCode("getPodcastEpisode") == 10)
            #expect(try ann.errorCode("getNewestPodcasts", [("count", "-1")]) == 0)
            #expect(try ann.errorCode("getPodcasts", [("id", "pc-x")]) == 70)
            #expect(try ann.errorCode("downloadPodcastEpisode", [("id", "pe-1")]) == 70)
            #expect(try ann.errorCode("deletePodcastChannel", [("id", "pc-7")]) == 70)
            // A user without the podcast role reads but does not subscribe.
            _ = try ann.ok("createUser", [("username", "cy"), ("password", "cy-pass")])
            let cy = SubsonicClient(server, auth: [("u", "cy"), ("p", "cy-pass")])
            #expect(try cy.errorCode("createPodcastChannel", [("url", "\(base)/feed.xml")]) == 50)
            let empty = try #require(try ann.ok("getPodcasts")["podcasts"] as? [String: Any])
            #expect(empty["channel"] == nil)

            for name in ["feed.xml", "atom.xml", "malformed.xml", "missing.xml", "redirect-loop"] {
                _ = try ann.ok("createPodcastChannel", [("url", "\(base)/\(name)")])
            }
            #expect(try ann.errorCode("createPodcastChannel", [("url", "\(base)/feed.xml")]) == 0)  // already followed
            #expect(server.waitForLine { $0.contains("refreshed pc-2 'Shelf Talk'") } != nil)
            #expect(server.waitForLine { $0.contains("pc-2: picture kept") } != nil)
            #expect(server.waitForLine { $0.contains("refreshed pc-3 'Atom Hour'") } != nil)
            #expect(server.waitForLine { $0.contains("pc-4: could not read the feed") } != nil)
            #expect(server.waitForLine { $0.contains("pc-5: could not fetch the feed") } != nil)
            #expect(server.waitForLine { $0.contains("pc-6: could not fetch the feed") } != nil)

            func channels(_ client: SubsonicClient, _ parameters: [(String, String)] = []) throws -> [String: [String: Any]] {
                let list = (try client.ok("getPodcasts", parameters)["podcasts"] as? [String: Any])?["channel"] as? [[String: Any]] ?? []
                return Dictionary(list.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            }
            var all = try channels(cy)
            let talk = try #require(all["pc-2"])
            #expect(talk["title"] as? String == "Shelf Talk" && talk["status"] as? String == "completed")
            #expect(talk["description"] as? String == "Talks about music libraries")
            #expect(talk["originalImageUrl"] as? String == "\(base)/cover.png" && talk["coverArt"] as? String == "pc-2")
            let episodes = try #require(talk["episode"] as? [[String: Any]])
            #expect(episodes.compactMap { $0["title"] as? String } == ["Words only", "Loops", "Too big", "Cut short", "First"])
            let byTitle = Dictionary(episodes.map { ($0["title"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            let first = try #require(byTitle["First"])
            #expect(first["status"] as? String == "new" && first["channelId"] as? String == "pc-2" && first["streamId"] == nil)
            #expect(first["description"] as? String == "Show notes of First" && first["duration"] as? Int == 3)
            #expect(first["publishDate"] as? String == "2026-11-02T10:00:00Z" && first["type"] as? String == "podcast")
            #expect(byTitle["Words only"]?["status"] as? String == "skipped")
            #expect(all["pc-3"]?["title"] as? String == "Atom Hour" && (all["pc-3"]?["episode"] as? [Any])?.count == 1)
            #expect(all["pc-4"]?["status"] as? String == "error")
            #expect((all["pc-4"]?["errorMessage"] as? String)?.contains("not well-formed XML") == true)
            #expect((all["pc-5"]?["errorMessage"] as? String)?.contains("HTTP 404") == true)
            #expect((all["pc-6"]?["errorMessage"] as? String)?.contains("redirects") == true)
            #expect(try channels(ann, [("includeEpisodes", "false")])["pc-2"]?["episode"] == nil)
            #expect(try channels(ann, [("id", "pc-3")]).keys.sorted() == ["pc-3"])

            // The cover, as JPEG at the asked size.
            let cover = try ann.raw("getCoverArt", [("id", "pc-2"), ("size", "16")])
            #expect(cover.status == 200 && cover.headers["content-type"] == "image/jpeg" && cover.body.prefix(2) == Data([0xFF, 0xD8]))
            let episodeCover = try ann.raw("getCoverArt", [("id", first["id"] as? String ?? "")])
            #expect(episodeCover.status == 200 && episodeCover.body.prefix(2) == Data([0xFF, 0xD8]))

            // Downloads: one whole, one truncated, one too large, one looping; only the whole one is kept.
            func id(_ title: String) -> String { byTitle[title]?["id"] as? String ?? "" }
            #expect(try cy.errorCode("downloadPodcastEpisode", [("id", id("First"))]) == 50)
            for title in ["First", "Cut short", "Too big", "Loops"] { _ = try ann.ok("downloadPodcastEpisode", [("id", id(title))]) }
            #expect(try ann.errorCode("downloadPodcastEpisode", [("id", id("Words only"))]) == 0)
            #expect(server.waitForLine { $0.contains("downloaded \(id("First"))") } != nil)
            for title in ["Cut short", "Too big", "Loops"] {
                #expect(server.waitForLine { $0.contains("\(id(title)): could not download") } != nil)
            }
            func episode(_ title: String) throws -> [String: Any] {
                try #require(try ann.ok("getPodcastEpisode", [("id", id(title))])["podcastEpisode"] as? [String: Any])
            }
            let done = try episode("First")
            #expect(done["status"] as? String == "completed" && done["streamId"] as? String == id("First"))
            #expect(done["suffix"] as? String == "mp3" && done["size"] as? Int == episodeAudio.count && done["contentType"] as? String == "audio/mpeg")
            #expect((try episode("Cut short")["errorMessage"] as? String)?.contains("closed after") == true)
            #expect((try episode("Too big")["errorMessage"] as? String)?.contains("larger than the limit") == true)
            #expect((try episode("Loops")["errorMessage"] as? String)?.contains("redirects") == true)
            for title in ["Cut short", "Too big", "Loops"] {
                #expect(try episode(title)["status"] as? String == "error" && episode(title)["streamId"] == nil)
                #expect(try ann.errorCode("stream", [("id", id(title))]) == 70)
            }
            let kept = try FileManager.default.contentsOfDirectory(atPath: fixture.root.appendingPathComponent("library/podcasts/2").path).sorted()
            #expect(kept == ["\(id("First").dropFirst(3)).mp3", "cover.png"])

            // Streamed like a track: the same bytes, ranges, a transcode from an offset — the file
            // itself to a user with the download role; cy (createUser's default: no download role)
            // gets a transcode, never the original.
            let streamed = try ann.raw("stream", [("id", id("First"))])
            #expect(streamed.status == 200 && streamed.body == episodeAudio)
            let forCy = try cy.raw("stream", [("id", id("First"))])
            #expect(forCy.status == 200 && !forCy.body.isEmpty && forCy.body != episodeAudio)
            let part = try ann.raw("stream", [("id", id("First"))], headers: ["Range": "bytes=10-19"])
            #expect(part.status == 206 && part.body == episodeAudio[10..<20])
            let transcoded = try cy.raw("stream", [("id", id("First")), ("format", "opus"), ("timeOffset", "1")])
            #expect(transcoded.status == 200 && transcoded.body.prefix(4) == Data("OggS".utf8))
            // The page's player streams an episode from /api/ as it streams a track: the same bytes.
            let page = Curl(base: server.base)
            let signedIn = try page.request(
                "POST", "/api/session", headers: ["x-shelf-request": "1"],
                body: try JSONSerialization.data(withJSONObject: ["name": "ann", "password": ServedLibrary.annPassword]))
            #expect(signedIn.status == 200, "\(String(decoding: signedIn.body, as: UTF8.self))")
            let episodeNumber = id("First").dropFirst("pe-".count)
            let fromPage = try page.request("GET", "/api/podcasts/episodes/\(episodeNumber)/stream", headers: ["x-shelf-request": "1"])
            #expect(fromPage.status == 200 && fromPage.body == episodeAudio, "\(fromPage.status)")
            #expect(try page.request("GET", "/api/podcasts/episodes/999/stream", headers: ["x-shelf-request": "1"]).status == 404)
            let newest = try #require((try cy.ok("getNewestPodcasts", [("count", "2")])["newestPodcasts"] as? [String: Any])?["episode"] as? [[String: Any]])
            #expect(newest.compactMap { $0["title"] as? String } == ["Atomic", "Words only"])

            // XML carries the same shape.
            let xml = try ann.raw("getPodcasts", [("id", "pc-2")])
            #expect(xml.text.contains("<channel id=\"pc-2\"") && xml.text.contains("<episode id=\"\(id("First"))\""))

            // py-opensonic's strict models take every podcast answer.
            try runModelChecks(server, "podcasts", id("First"))

            // A restart keeps channels, episodes and the file.
            server.stop()
            server = try ServerProcess(library: fixture.library, arguments: arguments)
            ann = SubsonicClient(server)
            #expect(try ann.raw("stream", [("id", id("First"))]).body == episodeAudio)
            all = try channels(ann)
            #expect(all.keys.sorted() == ["pc-2", "pc-3", "pc-4", "pc-5", "pc-6"])

            // Deleting an episode removes its file and keeps it listed as deleted; a refresh does not
            // bring it back; deleting a channel removes it and its folder.
            _ = try ann.ok("deletePodcastEpisode", [("id", id("First"))])
            #expect(try episode("First")["status"] as? String == "deleted")
            #expect(try ann.errorCode("stream", [("id", id("First"))]) == 70)
            _ = try ann.ok("refreshPodcasts")
            #expect(server.waitForLine { $0.contains("refreshed pc-2 'Shelf Talk': 5 episodes, 0 new") } != nil)
            #expect(try episode("First")["status"] as? String == "deleted")
            _ = try ann.ok("deletePodcastChannel", [("id", "pc-2")])
            #expect(try channels(ann)["pc-2"] == nil)
            #expect(!FileManager.default.fileExists(atPath: fixture.root.appendingPathComponent("library/podcasts/2").path))
            #expect(try ann.errorCode("getPodcastEpisode", [("id", id("First"))]) == 70)

            // Without --podcast-allow-private again: a name that resolves to loopback, IPv4 written
            // inside IPv6, and a short form are each refused when their address is dialled (after
            // any lookup), if not at once.
            server.stop()
            server = try ServerProcess(library: fixture.library, arguments: ["--config", config.path])
            let strict = SubsonicClient(server)
            for host in ["localhost", "[::ffff:127.0.0.1]", "127.1"] {
                let url = "http://\(host):\(feedServer.port)/feed.xml"
                let answer = try strict.json("createPodcastChannel", [("url", url)])
                if answer["status"] as? String == "failed" {
                    #expect(((answer["error"] as? [String: Any])?["message"] as? String)?.contains("podcast-allow-private") == true, "\(host)")
                    continue
                }
                func listed() throws -> [String: Any]? {
                    ((try strict.ok("getPodcasts")["podcasts"] as? [String: Any])?["channel"] as? [[String: Any]])?.first { $0["url"] as? String == url }
                }
                let channel = try #require(try listed()?["id"] as? String, "\(host)")
                #expect(server.waitForLine { $0.contains("\(channel): could not fetch the feed") } != nil, "\(host)")
                let failed = try #require(try listed(), "\(host)")
                #expect(failed["status"] as? String == "error", "\(host)")
                #expect((failed["errorMessage"] as? String)?.contains("refused to connect to") == true, "\(host): \(failed)")
            }
        }
    }
}

/// Runs `Tests/opensonic_models_test.py MODE SUBJECT` against `server` as ann; skipped (with a
/// line saying so) without the project's `.venv`.
func runModelChecks(_ server: ServerProcess, _ mode: String, _ subject: String) throws {
    let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    let python = tests.deletingLastPathComponent().appendingPathComponent(".venv/bin/python")
    guard FileManager.default.isExecutableFile(atPath: python.path) else {
        print("no .venv (run make subsonic-client): the py-opensonic \(mode) checks are skipped")
        return
    }
    let result = try ChildProcess.run(
        python,
        [
            tests.appendingPathComponent("opensonic_models_test.py").path, "http://127.0.0.1", "\(server.port)", "ann", ServedLibrary.annPassword, mode,
            subject,
        ])
    #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
}
