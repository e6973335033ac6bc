import Foundation
import ShelfDatabase
import ShelfTestSupport
import Testing

/// The legacy migration killed with SIGKILL at random moments, then resumed: no picture is lost,
/// none is moved twice, and the file stays sound at every stop.
@Suite struct MigrationCrashTests {
    let products = ChildProcess.productsDirectory()
    static let tracks = 600
    static let kib = 16
    static let distinct = 170

    /// Checks the store as a kill left it; returns true once it is fully migrated.
    func check(_ path: String) throws -> Bool {
        let db = try Connection(path: path, mode: .readOnly)
        #expect(try db.scalar(String.self, "PRAGMA integrity_check") == "ok")
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM track") == Self.tracks)
        let version = try db.scalar(Int.self, "PRAGMA user_version")
        let columns = try db.query("PRAGMA table_info(track)", []) { try $0.string(1) }
        let hasArtworkTable = try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'artwork'") == 1
        if version == 1 && columns.contains("artwork_id") && hasArtworkTable {
            // Every track holds its picture in exactly one place.
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM track WHERE (artwork_data IS NULL) = (artwork_id IS NULL)") == 0)
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM artwork WHERE id NOT IN (SELECT artwork_id FROM track WHERE artwork_id IS NOT NULL)") == 0)
        }
        let moved: [(Int64, Data)] =
            hasArtworkTable && columns.contains("artwork_id")
            ? try db.query("SELECT track.id, artwork.data FROM track JOIN artwork ON artwork.id = track.artwork_id", []) {
                (try $0.int64(0), try $0.data(1))
            }
            : []
        for (id, data) in moved {
            #expect(data == LegacyPictures.picture(index: Int(id) - 1, kib: Self.kib, distinct: Self.distinct), "track \(id)")
        }
        // The chunked part ends at 2; the ordinary steps then take it to the current version.
        guard (version ?? 0) >= 2 else { return false }
        #expect(!columns.contains("artwork_data"))
        #expect(moved.count == Self.tracks)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM artwork") == Self.distinct)
        return true
    }

    @Test func killedAtRandomMomentsAndResumedMovesEveryPictureOnce() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let made = try ChildProcess.run(
                products.appendingPathComponent("shelf-bench"),
                [
                    "legacy-store", "--tracks", String(Self.tracks), "--artwork-kib", String(Self.kib), "--distinct", String(Self.distinct),
                    "--library", dir.url.path,
                ])
            #expect(made.status == 0, "\(made.stderr)")
            let path = dir.path("library.sqlite").path
            // 150 chunks; each run halts itself after a seeded number of pictures moved in all (the
            // count carries over between runs) and is killed there, so the kills land mid-migration
            // on any machine, however fast.
            var random = SeededRandom(seed: 42)
            var kills = 0
            var target = 0
            for _ in 0..<8 {
                let arguments = ["--library", dir.url.path, "migrate", "--chunk", "4", "--json"]
                target += 4 * random.int(1...30)
                let run = try ChildProcess.runKilling(
                    products.appendingPathComponent("shelf"), arguments, stopAt: "moving pictures", done: min(target, Self.tracks - 4))
                if run.killed { kills += 1 }
                if try check(path) { break }
            }
            #expect(kills >= 2, "the migration finished before it could be killed often enough")
            let last = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", dir.url.path, "migrate", "--json"])
            #expect(last.status == 0, "\(last.stderr)")
            #expect(try check(path))
            let info = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", dir.url.path, "info", "--json"])
            #expect(info.status == 0 && info.stdout.contains("\"artworkCount\":\(Self.distinct)"))
        }
    }
}

/// An import killed with SIGKILL at random moments leaves a consistent library, and a rerun
/// finishes it: every file imported exactly once.
@Suite struct ImportCrashTests {
    let products = ChildProcess.productsDirectory()

    @Test func killedImportsResumeToExactlyOneTrackPerFile() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let music = dir.path("music")
            let files = 400
            for index in 0..<files {
                let folder = music.appendingPathComponent("album-\(index / 20)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try TestAudio.wav(seconds: 0.05, frequency: 100 + Double(index) * 1.5).write(to: folder.appendingPathComponent("\(index).wav"))
            }
            let store = dir.path("lib/library.sqlite").path
            // 40 chunks; each run halts itself after a seeded number of files (fewer than half of
            // them), or in its mirror phase, and is killed there, so every kill lands mid-work.
            var random = SeededRandom(seed: 8)
            var kills = 0
            for round in 0..<6 {
                let arguments = ["--library", dir.path("lib").path, "import", music.path, "--chunk", "10", "--json"]
                let stopAfter = 10 * random.int(1...(files / 20))
                let run =
                    round == 5
                    ? try ChildProcess.runKilling(products.appendingPathComponent("shelf"), arguments, stopAt: "mirror:rows")
                    : try ChildProcess.runKilling(products.appendingPathComponent("shelf"), arguments, stopAt: "importing", done: stopAfter)
                if run.killed { kills += 1 }
                if FileManager.default.fileExists(atPath: store) {
                    let db = try Connection(path: store, mode: .readOnly)
                    #expect(try db.scalar(String.self, "PRAGMA integrity_check") == "ok")
                    #expect(try db.scalar(Int.self, "SELECT count(*) - count(DISTINCT path) FROM track") == 0)
                    #expect(try db.scalar(Int.self, "SELECT count(*) % 10 FROM track") == 0, "whole chunks only")
                }
            }
            #expect(kills >= 2)
            let last = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", dir.path("lib").path, "import", music.path, "--json"])
            #expect(last.status == 0, "\(last.stderr)")
            let db = try Connection(path: store, mode: .readOnly)
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM track") == files)
            #expect(try db.scalar(Int.self, "SELECT count(DISTINCT audio_hash) FROM track") == files)
            #expect(try db.scalar(String.self, "PRAGMA integrity_check") == "ok")
        }
    }
}
