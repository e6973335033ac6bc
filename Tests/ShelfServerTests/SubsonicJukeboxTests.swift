import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// jukeboxControl through a real server driving a real mpv over its JSON IPC socket, on mpv's
/// null audio output (it plays in real time, to no device).
@Suite(.serialized) struct SubsonicJukeboxTests {
    @Test func theJukeboxPlaysTheQueueOnTheServer() async throws {
        try await offCooperativePool {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv") else {
                Issue.record("mpv is not installed; make deps installs it")
                return
            }
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            // A 20-second track to play, pause and seek in (the sample tracks last 0.3 s).
            let long = fixture.root.appendingPathComponent("long")
            try FileManager.default.createDirectory(at: long, withIntermediateDirectories: true)
            try TestAudio.wav(seconds: 20).write(to: long.appendingPathComponent("long.wav"))
            #expect(try fixture.shelf(["import", long.path]).status == 0)

            // Off unless asked for.
            do {
                let server = try ServerProcess(library: fixture.library)
                defer { server.stop() }
                let off = try SubsonicClient(server).json("jukeboxControl", [("action", "status")])
                #expect(((off["error"] as? [String: Any])?["message"] as? String)?.contains("--jukebox") == true)
            }

            let config = fixture.root.appendingPathComponent("shelf.toml")
            try "jukebox-audio-output = \"null\"\n".write(to: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(library: fixture.library, arguments: ["--jukebox", "--config", config.path])
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let bob = SubsonicClient(server, auth: [("u", "bob"), ("p", ServedLibrary.bobPassword)])
            #expect(try bob.errorCode("jukeboxControl", [("action", "status")]) == 50)

            func status(_ action: String, _ extra: [(String, String)] = []) throws -> [String: Any] {
                try #require(try ann.ok("jukeboxControl", [("action", action)] + extra)["jukeboxStatus"] as? [String: Any])
            }
            func playlist() throws -> [String: Any] {
                try #require(try ann.ok("jukeboxControl", [("action", "get")])["jukeboxPlaylist"] as? [String: Any])
            }
            /// Asks for the status until `done` holds (mpv plays in real time; a bound for a stuck one).
            func waitFor(_ what: String, _ done: ([String: Any]) -> Bool) throws -> [String: Any] {
                let deadline = Date().addingTimeInterval(30)
                var last: [String: Any] = [:]
                while Date() < deadline {
                    last = try status("status")
                    if done(last) { return last }
                    usleep(50_000)
                }
                Issue.record("the jukebox never reached: \(what); last status \(last)")
                return last
            }

            let empty = try playlist()
            #expect(empty["currentIndex"] as? Int == -1 && empty["playing"] as? Bool == false && empty["gain"] as? Double == 1 && empty["entry"] == nil)
            // Bad input, nothing changed.
            #expect(try ann.errorCode("jukeboxControl") == 10)
            #expect(try ann.errorCode("jukeboxControl", [("action", "dance")]) == 0)
            #expect(try ann.errorCode("jukeboxControl", [("action", "skip")]) == 10)
            #expect(try ann.errorCode("jukeboxControl", [("action", "skip"), ("index", "4")]) == 0)
            #expect(try ann.errorCode("jukeboxControl", [("action", "add")]) == 10)
            #expect(try ann.errorCode("jukeboxControl", [("action", "add"), ("id", "tr-999")]) == 70)
            #expect(try ann.errorCode("jukeboxControl", [("action", "add"), ("id", "al-1")]) == 70)
            #expect(try ann.errorCode("jukeboxControl", [("action", "setGain"), ("gain", "2")]) == 0)
            #expect(try ann.errorCode("jukeboxControl", [("action", "remove"), ("index", "-1")]) == 0)
            #expect(try playlist()["entry"] == nil)

            // The long track: it plays, pauses, seeks and takes a volume.
            _ = try status("set", [("id", "tr-3")])
            _ = try status("start")
            _ = try waitFor("playing") { $0["playing"] as? Bool == true }
            #expect(try status("setGain", [("gain", "0.5")])["gain"] as? Double == 0.5)
            let paused = try status("stop")
            #expect(paused["playing"] as? Bool == false)
            _ = try status("skip", [("index", "0"), ("offset", "12")])
            _ = try waitFor("12 s into the track") { ($0["position"] as? Int ?? 0) >= 12 && $0["playing"] as? Bool == true }
            // `set` leaves the song playing: its place in the new queue is the current one.
            let kept = try status("set", [("id", "tr-1"), ("id", "tr-3")])
            #expect(kept["currentIndex"] as? Int == 1 && kept["playing"] as? Bool == true && (kept["position"] as? Int ?? 0) >= 12)
            _ = try status("set", [("id", "tr-3")])

            // The short ones after it: skipping to the first plays it, then the next, then the queue ends.
            _ = try status("add", [("id", "tr-1"), ("id", "tr-2")])
            let queued = try playlist()
            #expect((queued["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tr-3", "tr-1", "tr-2"])
            _ = try status("skip", [("index", "1")])
            let ended = try waitFor("the end of the queue") { $0["currentIndex"] as? Int == 2 && $0["playing"] as? Bool == false }
            #expect(ended["currentIndex"] as? Int == 2)
            // Each song played to its end is a listen of ann's, who told the jukebox what to play.
            var heard: Set<String> = []
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !heard.isSuperset(of: ["tr-1", "tr-2"]) {
                let listens = (try fixture.json(["history", "--user", "ann"]) as? [String: Any])?["listens"] as? [[String: Any]] ?? []
                heard = Set(
                    listens.filter { $0["source"] as? String == "jukebox" && $0["client"] as? String == "jukebox" }.compactMap {
                        ($0["track"] as? Int).map { "tr-\($0)" }
                    })
                usleep(50_000)
            }
            #expect(heard.isSuperset(of: ["tr-1", "tr-2"]), "jukebox listens: \(heard)")

            // Editing the queue.
            #expect(try status("remove", [("index", "0")])["currentIndex"] as? Int == 1)
            _ = try status("shuffle")
            #expect(Set((try playlist()["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []) == ["tr-1", "tr-2"])
            _ = try status("set", [("id", "tr-2")])
            #expect((try playlist()["entry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["tr-2"])
            let cleared = try status("clear")
            #expect(cleared["currentIndex"] as? Int == -1 && cleared["playing"] as? Bool == false)

            // XML names the same fields.
            let xml = try ann.raw("jukeboxControl", [("action", "status")])
            #expect(xml.text.contains("<jukeboxStatus currentIndex=\"-1\" playing=\"false\" gain=\"0.5\" position=\"0\"/>"))
            try runModelChecks(server, "jukebox", "tr-1")
            server.stop()
            #expect(server.waitForLine { $0.contains("jukebox: mpv started") } != nil)
        }
    }
}
