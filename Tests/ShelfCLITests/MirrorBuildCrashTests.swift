import Foundation
import ShelfDatabase
import ShelfTestSupport
import Testing

/// `shelf mirror build` killed with SIGKILL in each of its phases: `shelf mirror status` then
/// reports what the file holds, and the next build resumes from there instead of starting again.
@Suite struct MirrorBuildCrashTests {
    let products = ChildProcess.productsDirectory()
    static let tracks = 2_400
    static let chunk = 200
    static let phases = ["rows", "playlists", "indexes", "groups", "values", "searchMerge", "replay"]

    func shelf(_ library: URL, _ arguments: [String]) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", library.path] + arguments)
    }

    func status(_ library: URL) throws -> [String: Any] {
        let result = try shelf(library, ["mirror", "status", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// What browsing answers, to compare before the kills and after the resumed build.
    func views(_ library: URL) throws -> [String] {
        try [
            ["tracks", "--sort", "artist", "--limit", "30", "--json"], ["sections", "--sort", "artist", "--json"],
            ["artists", "--limit", "30", "--json"], ["search", "the", "--limit", "10", "--json"],
            ["playlist", "page", "1", "--limit", "10", "--json"],
        ].map { arguments in
            let result = try shelf(library, arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
    }

    @Test(arguments: phases)
    func killedInAPhaseResumesThere(phase: String) async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let made = try ChildProcess.run(
                products.appendingPathComponent("shelf-bench"),
                ["generate", "--tracks", String(Self.tracks), "--seed", "3", "--library", dir.url.path])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(try status(dir.url)["state"] as? String == "ready", "generate finishes with the mirror ready")
            let playlist = try shelf(dir.url, ["playlist", "create", "Mix"])
            #expect(playlist.status == 0, "\(playlist.stderr)")
            #expect(try shelf(dir.url, ["playlist", "add", "1", "5", "9", "5", "300"]).status == 0)
            let expected = try views(dir.url)

            // Kill the fresh build in `phase`: the child halts itself right after its first report of
            // the phase (in rows, after a seeded number of chunks), so the kill lands exactly there
            // on any machine, however fast.
            var random = SeededRandom(seed: UInt64(Self.phases.firstIndex(of: phase)! + 11))
            let chunksBeforeKill = random.int(2...(Self.tracks / Self.chunk - 3))
            let killed = try ChildProcess.runKilling(
                products.appendingPathComponent("shelf"), ["--library", dir.url.path, "mirror", "build", "--fresh", "--chunk", String(Self.chunk)],
                stopAt: "mirror:\(phase)", done: phase == "rows" ? chunksBeforeKill * Self.chunk : 0)
            #expect(killed.killed, "the build ended before it reached \(phase): \(killed.lines)")

            // Status tells the truth from the file: still building, in the phase reached or a later one.
            let after = try status(dir.url)
            #expect(after["state"] as? String == "building")
            let reached = try #require(after["phase"] as? String)
            let reachedIndex = try #require(Self.phases.firstIndex(of: reached))
            #expect(reached == phase, "killed in \(phase), status says \(reached)")
            #expect(after["buildRunning"] as? Bool == false)
            #expect(after["totalTracks"] as? Int == Self.tracks)
            let mirror = try Connection(path: dir.path("mirror.sqlite").path, mode: .readOnly)
            #expect(try mirror.scalar(String.self, "PRAGMA integrity_check") == "ok")
            let rows = try mirror.scalar(Int.self, "SELECT count(*) FROM mirror_track") ?? -1
            if reached == "rows" {
                #expect(after["builtTracks"] as? Int == rows)
                #expect(rows == chunksBeforeKill * Self.chunk)
                #expect(after["phaseDone"] as? Int == rows)
            } else {
                #expect(rows == Self.tracks)
                #expect(after["builtTracks"] as? Int == Self.tracks)
            }
            if reached == "indexes" {
                let present = try mirror.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'mirror_track_%'") ?? -1
                #expect(after["phaseDone"] as? Int == present)
            }

            // A read command says the mirror is not ready (and answers anyway, from the direct path).
            let read = try shelf(dir.url, ["tracks", "--sort", "artist", "--limit", "30", "--json"])
            #expect(read.stdout == expected[0])
            #expect(read.stderr.contains("shelf mirror build"), "\(read.stderr)")
            #expect(read.stderr.split(separator: "\n").count == 1)

            // The next build starts at the phase on disk (and in rows, at the tracks already copied).
            let resumed = try ChildProcess.runKilling(
                products.appendingPathComponent("shelf"), ["--library", dir.url.path, "mirror", "build", "--chunk", String(Self.chunk)]
            ) { _ in false }
            #expect(!resumed.killed)
            let first = try #require(resumed.lines.first { $0.hasPrefix("progress mirror:") }, "\(resumed.lines)")
            #expect(first.hasPrefix("progress mirror:\(reached) "), "resumed with \(first), file was in \(reached)")
            if reached == "rows" { #expect(ChildProcess.progress(first, label: "mirror:rows")?.done == rows) }
            for earlier in Self.phases[..<reachedIndex] {
                #expect(!resumed.lines.contains { $0.hasPrefix("progress mirror:\(earlier) ") }, "redid \(earlier)")
            }
            #expect(try status(dir.url)["state"] as? String == "ready")
            #expect(try views(dir.url) == expected)
        }
    }
}
