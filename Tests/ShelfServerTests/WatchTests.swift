import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

/// The server's folder watcher: what is copied in, renamed, deleted or unmounted under a music
/// root reaches the library by itself, and an offline root loses nothing. Every wait is for the
/// change to be visible in the library, bounded only so that a failure ends.
@Suite(.serialized) struct WatchTests {
    /// Polls `condition` until it holds (the bound only ends a failing test).
    static func eventually(_ what: String, timeout: TimeInterval = 30, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        Issue.record("not within \(timeout) s: \(what)")
        throw CancellationError()
    }

    /// The library's tracks as `shelf tracks --json` lists them (`filter` as given).
    static func tracks(_ fixture: ServedLibrary, filter: String? = nil) throws -> [[String: Any]] {
        let arguments = ["tracks", "--limit", "1000"] + (filter.map { ["--filter", $0] } ?? [])
        let document = try #require(try fixture.json(arguments) as? [String: Any])
        return try #require(document["items"] as? [[String: Any]])
    }

    static func track(_ fixture: ServedLibrary, _ id: Int) throws -> [String: Any] {
        try #require(try fixture.json(["track", String(id)]) as? [String: Any])
    }

    static func sampleFiles(_ count: Int, into folder: String, seconds: String) throws {
        let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
        let written = try ChildProcess.run(bench, ["sample-files", "--tracks", String(count), "--dir", folder, "--seconds", seconds])
        try #require(written.status == 0, "\(written.stderr)")
    }

    @Test func copiesRenamesAndDeletesReachTheLibraryByThemselves() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 3)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library, arguments: ["--music", fixture.music])
            defer { server.stop() }
            try #require(server.waitForLine { $0.contains("shelf: watch: watching") } != nil, "\(server.log)")
            let ann = SubsonicClient(server)
            let before = try Self.tracks(fixture)
            #expect(before.count == 3)

            // An album copied in (written elsewhere, then copied whole): one import batch.
            let staging = fixture.root.appendingPathComponent("staging").path
            try Self.sampleFiles(5, into: staging, seconds: "0.6")
            let album = URL(fileURLWithPath: fixture.music).appendingPathComponent("new album")
            try FileManager.default.copyItem(at: URL(fileURLWithPath: staging), to: album)
            try Self.eventually("the copied album is in the library") { try Self.tracks(fixture).count == 8 }
            #expect(server.waitForLine(timeout: 10) { $0.contains("shelf: watch: 5 added") } != nil, "\(server.log.suffix(8))")
            // Subsonic sees them too.
            let status = try #require(try ann.ok("getScanStatus")["scanStatus"] as? [String: Any])
            #expect(status["count"] as? Int == 8)

            // A file renamed into another folder keeps its track (ID, play count).
            let first = try #require(before.first)
            let id = try #require(first["id"] as? Int)
            let oldPath = try #require(first["path"] as? String)
            #expect(try fixture.shelf(["edit", String(id), "--set", "title=Renamed Song"]).status == 0)
            // Shelf's own edit (a temporary renamed over the file) is seen and found unchanged: not imported again.
            #expect(server.waitForLine(timeout: 10) { $0.contains("shelf: watch: 0 added, 0 updated, 0 moved, 0 failed") } != nil, "\(server.log.suffix(8))")
            let newPath = URL(fileURLWithPath: fixture.music).appendingPathComponent("moved/renamed-\(id).\(URL(fileURLWithPath: oldPath).pathExtension)").path
            try FileManager.default.createDirectory(atPath: (newPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: oldPath, toPath: newPath)
            try Self.eventually("the renamed file keeps its track") { try Self.track(fixture, id)["path"] as? String == newPath }
            #expect(try Self.track(fixture, id)["missing"] as? Bool == false)
            #expect(try Self.tracks(fixture).count == 8)

            // A file deleted: its track is missing (hidden from lists, listed by the filter, still readable).
            let doomed = try #require(before.last)
            let doomedID = try #require(doomed["id"] as? Int)
            try FileManager.default.removeItem(atPath: try #require(doomed["path"] as? String))
            try Self.eventually("the deleted file's track is missing") { try Self.track(fixture, doomedID)["missing"] as? Bool == true }
            #expect(try Self.tracks(fixture).count == 7)
            #expect(try Self.tracks(fixture, filter: "missing:yes").compactMap { $0["id"] as? Int } == [doomedID])
            let song = try ann.ok("getSong", [("id", "tr-\(doomedID)")])
            #expect(song["song"] != nil)

            // The root folder moved away: offline, nothing marked; moved back: watched and scanned again.
            let aside = fixture.root.appendingPathComponent("aside").path
            try FileManager.default.moveItem(atPath: fixture.music, toPath: aside)
            #expect(server.waitForLine(timeout: 30) { $0.contains("is offline") } != nil, "\(server.log.suffix(8))")
            #expect(try Self.tracks(fixture, filter: "missing:yes").count == 1)
            try FileManager.default.moveItem(atPath: aside, toPath: fixture.music)
            #expect(server.waitForLine(timeout: 30) { $0.contains("music roots are back") } != nil, "\(server.log.suffix(8))")
            // Watched again: a new file is found.
            try Self.sampleFiles(1, into: fixture.root.appendingPathComponent("one").path, seconds: "0.7")
            try FileManager.default.copyItem(
                at: fixture.root.appendingPathComponent("one"), to: URL(fileURLWithPath: fixture.music).appendingPathComponent("one"))
            try Self.eventually("a file added after the root came back") { try Self.tracks(fixture).count == 8 }
            #expect(try Self.tracks(fixture, filter: "missing:yes").count == 1)
        }
    }

    /// A tmpfs root unmounted under a running server: reported offline by the watcher, the scan
    /// and `shelf scan`; no track is marked missing or pruned; mounted again with the same files,
    /// every track, star and playlist entry is as it was.
    /// A file still being written (a slow copy: the first half, a pause with the file open, the
    /// second half) is read once its writer closes it, not while it pauses: it was imported
    /// half-written and then updated. A file copied in whole beside it is imported meanwhile.
    @Test func aFileStillBeingWrittenWaitsForItsWriterToClose() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library, arguments: ["--music", fixture.music])
            defer { server.stop() }
            try #require(server.waitForLine { $0.contains("shelf: watch: watching") } != nil, "\(server.log)")
            let staging = fixture.root.appendingPathComponent("staging").path
            try Self.sampleFiles(2, into: staging, seconds: "2")
            let sources = try FileManager.default.subpathsOfDirectory(atPath: staging).filter {
                $0.hasSuffix(".mp3") || $0.hasSuffix(".flac") || $0.hasSuffix(".opus")
            }
            .sorted()
            try #require(sources.count == 2)
            let whole = try Data(contentsOf: URL(fileURLWithPath: staging).appendingPathComponent(sources[0]))
            let slowFolder = URL(fileURLWithPath: fixture.music).appendingPathComponent("slow")
            try FileManager.default.createDirectory(at: slowFolder, withIntermediateDirectories: true)
            let slow = slowFolder.appendingPathComponent("copying." + URL(fileURLWithPath: sources[0]).pathExtension)
            // Created and kept open, as cp and rsync write: open(O_CREAT) is the file's IN_CREATE, and
            // its close, after the second half, its IN_CLOSE_WRITE.
            let descriptor = open(slow.path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            try #require(descriptor >= 0)
            let writer = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
            try writer.write(contentsOf: whole.prefix(whole.count / 2))
            // A whole file copied in after the first half: once it is in the library, the
            // half-written one has been quiet longer, and was imported with it before the fix.
            let sentinel = URL(fileURLWithPath: fixture.music).appendingPathComponent("whole")
            try FileManager.default.createDirectory(at: sentinel, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: staging).appendingPathComponent(sources[1]),
                to: sentinel.appendingPathComponent(URL(fileURLWithPath: sources[1]).lastPathComponent))
            do {
                try Self.eventually("the whole file is in the library") { try Self.tracks(fixture).count == 2 }
            } catch {
                Issue.record("tracks: \(try Self.tracks(fixture).compactMap { $0["path"] as? String }); log: \(server.log.suffix(10))")
                throw error
            }
            #expect(try Self.tracks(fixture, filter: "path:copying").isEmpty, "a file still open for writing was imported")
            try writer.write(contentsOf: whole.suffix(from: whole.count / 2))
            try writer.close()
            try Self.eventually("the finished file is in the library") { try Self.tracks(fixture).count == 3 }
            let imported = try #require(try Self.tracks(fixture, filter: "path:copying").first)
            #expect(imported["fileSize"] as? Int == whole.count, "\(imported)")
            #expect(!server.log.contains { $0.contains("1 updated") }, "imported half-written, then updated: \(server.log.suffix(8))")
        }
    }

    @Test func anUnmountedRootLosesNothing() async throws {
        try await offCooperativePool {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-mount-\(UUID().uuidString)")
            let music = root.appendingPathComponent("music").path
            let kept = root.appendingPathComponent("kept").path
            try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
            defer {
                _ = try? ChildProcess.run(URL(fileURLWithPath: "/bin/umount"), [music])
                try? FileManager.default.removeItem(at: root)
            }
            func mount() throws -> Bool {
                try ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=64m", "shelf-test", music]).status == 0
            }
            guard getuid() == 0, try mount() else {
                print("skipped: mounting a tmpfs needs root (the deleted-root case covers offline roots without it)")
                return
            }
            try Self.sampleFiles(4, into: kept, seconds: "0.5")
            for name in try FileManager.default.contentsOfDirectory(atPath: kept) {
                try FileManager.default.copyItem(atPath: "\(kept)/\(name)", toPath: "\(music)/\(name)")
            }
            let library = root.appendingPathComponent("library").path
            let shelf = ServedLibrary.shelfBinary()
            func run(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
                try ChildProcess.run(shelf, ["--library", library] + arguments, stdin: stdin.map { Data($0.utf8) })
            }
            try #require(try run(["import", music]).status == 0)
            try #require(try run(["user", "add", "ann", "--admin", "--password-stdin"], stdin: ServedLibrary.annPassword + "\n").status == 0)
            try #require(try run(["playlist", "create", "Keep"]).status == 0)
            try #require(try run(["playlist", "add", "1", "1", "2", "3", "4"]).status == 0)
            let server = try ServerProcess(library: library, arguments: ["--music", music])
            defer { server.stop() }
            try #require(server.waitForLine { $0.contains("shelf: watch: watching") } != nil, "\(server.log)")
            let ann = SubsonicClient(server)
            _ = try ann.ok("star", [("id", "tr-2")])

            #expect(try ChildProcess.run(URL(fileURLWithPath: "/bin/umount"), [music]).status == 0)
            #expect(server.waitForLine(timeout: 30) { $0.contains("is offline") } != nil, "\(server.log.suffix(8))")
            // A scan now: the root is offline in the log and the scan status; nothing marked or pruned.
            _ = try ann.ok("startScan")
            #expect(server.waitForLine(timeout: 60) { $0.contains("shelf: scan: music root \(music) is offline") } != nil, "\(server.log.suffix(8))")
            let scan = try #require(try JSONSerialization.jsonObject(with: Data(try run(["scan", "--prune", "--json"]).stdout.utf8)) as? [String: Any])
            let roots = try #require(scan["roots"] as? [[String: Any]])
            #expect(roots.first?["state"] as? String == "offline" && scan["pruned"] as? Int == 0)
            #expect((scan["missing"] as? [Any])?.isEmpty == true)
            let text = try run(["scan"])
            #expect(text.stdout.contains("offline: \(music)"), "\(text.stdout)")

            // Mounted again with the same files: back, and nothing was lost.
            #expect(try mount())
            for name in try FileManager.default.contentsOfDirectory(atPath: kept) {
                try FileManager.default.copyItem(atPath: "\(kept)/\(name)", toPath: "\(music)/\(name)")
            }
            #expect(server.waitForLine(timeout: 30) { $0.contains("music roots are back") } != nil, "\(server.log.suffix(8))")
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(try run(["tracks", "--json"]).stdout.utf8)) as? [String: Any])
            #expect((listed["items"] as? [Any])?.count == 4)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(try run(["playlist", "show", "1", "--json"]).stdout.utf8)) as? [String: Any])
            #expect((items["items"] as? [[String: Any]])?.compactMap { ($0["track"] as? [String: Any])?["id"] as? Int } == [1, 2, 3, 4])
            let starred = try #require((try ann.ok("getStarred2")["starred2"] as? [String: Any])?["song"] as? [[String: Any]])
            #expect(starred.compactMap { $0["id"] as? String } == ["tr-2"])
        }
    }
}

/// A track cut from an image by its CUE sheet streams exactly its slice, raw (as FLAC) and
/// transcoded, with `timeOffset` inside the slice.
@Suite struct CueStreamTests {
    /// The duration of the audio a stream sent: decoded by ffmpeg to WAV (a piped stream's
    /// header has no length), then read by ffprobe.
    static func duration(of data: Data, in dir: URL, name: String) throws -> Double {
        let file = dir.appendingPathComponent(name)
        try data.write(to: file)
        let wav = dir.appendingPathComponent(name + ".wav")
        let decoded = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ffmpeg"), ["-v", "error", "-y", "-i", file.path, wav.path])
        try #require(decoded.status == 0, "\(decoded.stderr)")
        let probe = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/ffprobe"),
            ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", wav.path])
        return try #require(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(probe.stderr)")
    }

    @Test func aCueTrackStreamsItsSlice() async throws {
        try await offCooperativePool {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-cue-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let album = root.appendingPathComponent("music/album")
            try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
            try TestAudio.wav(seconds: 9, frequency: 330).write(to: album.appendingPathComponent("image.wav"))
            let sheet = """
                PERFORMER "Band"
                TITLE "Live"
                FILE "image.wav" WAVE
                  TRACK 01 AUDIO
                    TITLE "One"
                    INDEX 01 00:00:00
                  TRACK 02 AUDIO
                    TITLE "Two"
                    INDEX 01 00:02:00
                  TRACK 03 AUDIO
                    TITLE "Three"
                    INDEX 01 00:06:30

                """
            try Data(sheet.utf8).write(to: album.appendingPathComponent("image.cue"))
            let library = root.appendingPathComponent("library").path
            func run(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
                try ChildProcess.run(ServedLibrary.shelfBinary(), ["--library", library] + arguments, stdin: stdin.map { Data($0.utf8) })
            }
            try #require(try run(["import", root.appendingPathComponent("music").path]).status == 0)
            try #require(try run(["user", "add", "ann", "--admin", "--password-stdin"], stdin: ServedLibrary.annPassword + "\n").status == 0)
            let server = try ServerProcess(library: library)
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let song = try #require(try ann.ok("getSong", [("id", "tr-2")])["song"] as? [String: Any])
            #expect(song["title"] as? String == "Two" && song["duration"] as? Int == 4)
            let raw = try ann.raw("stream", [("id", "tr-2")])
            #expect(raw.status == 200 && raw.headers["content-type"] == "audio/flac")
            #expect(abs(try Self.duration(of: raw.body, in: root, name: "raw.flac") - 4.4) < 0.05)
            let offset = try ann.raw("stream", [("id", "tr-2"), ("format", "mp3"), ("maxBitRate", "128"), ("timeOffset", "1")])
            #expect(offset.status == 200)
            #expect(abs(try Self.duration(of: offset.body, in: root, name: "offset.mp3") - 3.4) < 0.1)
            let last = try ann.raw("download", [("id", "tr-3")])
            #expect(abs(try Self.duration(of: last.body, in: root, name: "last.flac") - 2.6) < 0.05)
        }
    }
}

/// `shelf serve --loudness`: the tracks without ReplayGain are measured in the background and
/// their gains reach the library (and so Subsonic's `replayGain`).
@Suite struct LoudnessJobTests {
    @Test func theServerMeasuresTracksWithoutGains() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 3)
            defer { fixture.remove() }
            // Three more tracks long enough to measure (the fixture's are shorter than a 400 ms block: no gain).
            let longer = fixture.root.appendingPathComponent("longer").path
            try WatchTests.sampleFiles(3, into: longer, seconds: "1.5")
            try #require(try fixture.shelf(["import", longer]).status == 0)
            #expect(try WatchTests.tracks(fixture, filter: "replayGain:yes").isEmpty)
            let server = try ServerProcess(library: fixture.library, arguments: ["--loudness"])
            defer { server.stop() }
            #expect(server.waitForLine(timeout: 120) { $0.contains("shelf: loudness: measured 6 tracks") } != nil, "\(server.log.suffix(8))")
            let measured = try WatchTests.tracks(fixture, filter: "replayGain:yes")
            #expect(measured.count == 3)
            let id = try #require(measured.first?["id"] as? Int)
            let song = try #require(try SubsonicClient(server).ok("getSong", [("id", "tr-\(id)")])["song"] as? [String: Any])
            let gain = try #require(song["replayGain"] as? [String: Any])
            #expect(gain["trackGain"] is Double && gain["albumGain"] is Double, "\(gain)")
        }
    }
}
