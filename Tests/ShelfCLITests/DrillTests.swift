import Foundation
import ShelfDatabase
import ShelfTestSupport
import Testing

/// The bad days: a full disk, a power cut in the middle of each kind of write, and damaged files.
/// Each case checks that the library is as it was before the failed transaction (or after the
/// committed one), that SQLite finds it sound, and that it works again once the cause is gone.
@Suite struct DrillTests: ShelfRunner {
    let products = ChildProcess.productsDirectory()

    /// What the library answers: tracks, playlists with their items, users, the history position.
    /// Store IDs are taken out of the token: a restore gives the store a new one, at the same position.
    func state(_ library: URL) throws -> [String] {
        let token = try ok(library, ["token"]).replacingOccurrences(of: "\\.[0-9a-f-]{36}\\.", with: ".STORE.", options: .regularExpression)
        return try [
            ok(library, ["tracks", "--limit", "1000", "--json"]), ok(library, ["playlist", "list", "--json"]),
            ok(library, ["playlist", "show", "1", "--json"]), ok(library, ["user", "list", "--json"]), token,
        ]
    }

    func integrity(_ library: URL) throws -> [String] {
        try Connection(path: library.appendingPathComponent("library.sqlite").path, mode: .readOnly).integrityCheck()
    }

    /// A library with tracks, a playlist and a user: every kind of data a write can touch.
    func makeLibrary(_ library: URL, music: URL, tracks: Int = 12) throws {
        try sampleFiles(tracks, into: music)
        try ok(library, ["import", music.path])
        try ok(library, ["user", "add", "ann", "--admin", "--password-stdin"], stdin: "first-password\n")
        try ok(library, ["playlist", "create", "Road"])
        try ok(library, ["playlist", "add", "1", "2", "3"])
    }

    // MARK: Power cut

    /// SIGKILL at the moment before COMMIT of each kind of write, and between the store's COMMIT
    /// and the mirror's: the store is sound, holds all of a transaction or none of it, its change
    /// log agrees with its data, and the mirror answers what the store holds.
    @Test(arguments: ["import", "edit", "playlist", "user", "mirror"])
    func killedDuringAWrite(kind: String) async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try makeLibrary(library, music: dir.path("music"))
            try sampleFiles(9, into: dir.path("more"), seconds: 0.4)
            let before = try state(library)
            let token = try ok(library, ["token"]).trimmingCharacters(in: .whitespacesAndNewlines)

            let (arguments, stdin, point): ([String], String?, String) =
                switch kind {
                case "import": (["import", dir.path("more").path, "--chunk", "4"], nil, "before-commit@3")
                case "edit": (["edit", "1", "2", "3", "4", "--set", "comment=never committed", "--set", "year=1901"], nil, "before-commit@1")
                case "playlist": (["playlist", "add", "1", "7", "8", "9"], nil, "before-commit@1")
                case "user": (["user", "add", "carol", "--password-stdin"], "third-password\n", "before-commit@1")
                default: (["edit", "5", "--set", "title=Committed before the cut"], nil, "before-mirror-commit@1")
                }
            let killed = try ChildProcess.runKilling(
                products.appendingPathComponent("shelf"), ["--library", library.path] + arguments, environment: ["SHELF_CRASH_POINT": point],
                stdin: stdin.map { Data($0.utf8) }
            ) { $0.hasPrefix("crash-point ") }
            #expect(killed.killed, "\(kind): the write ended before its crash point: \(killed.lines)")

            #expect(try integrity(library).isEmpty)
            let after = try state(library)
            let changes = try ok(library, ["changes", "--since", token, "--json"])
            switch kind {
            case "import":
                // Whole chunks of 4 committed before the one that died before its COMMIT; none half.
                let tracks = try #require(try JSONSerialization.jsonObject(with: Data(after[0].utf8)) as? [String: Any])
                let added = (tracks["total"] as? Int ?? 0) - 12
                #expect(added % 4 == 0 && added < 9, "\(added) tracks of an import killed mid-chunk")
                #expect(after[1...3] == before[1...3])
                #expect(changes.components(separatedBy: "\"inserted\"").count >= 1)
                try ok(library, ["import", dir.path("more").path])
                let resumed = try #require(try JSONSerialization.jsonObject(with: Data(try ok(library, ["tracks", "--json"]).utf8)) as? [String: Any])
                #expect(resumed["total"] as? Int == 12 + 9)
            case "mirror":
                // The store committed; the mirror did not: on the next open it catches up.
                #expect(after[0] != before[0])
                #expect(after[0].contains("Committed before the cut"))
                #expect(after[4] != before[4])
                let status = try #require(
                    try JSONSerialization.jsonObject(with: Data(try ok(library, ["mirror", "status", "--json"]).utf8)) as? [String: Any])
                #expect(status["state"] as? String == "ready")
                let fromMirror = try ok(library, ["tracks", "--filter", "title:committed", "--sort", "title", "--json"])
                try ok(library, ["mirror", "disable"])
                let direct = try ok(library, ["tracks", "--filter", "title:committed", "--sort", "title", "--json"])
                #expect(fromMirror == direct)
                #expect(direct.contains("Committed before the cut"))
            default:
                #expect(after == before, "\(kind): a transaction killed before its COMMIT left a trace")
                #expect(!changes.contains("\"transaction\""), "\(kind): the change log has an entry for a write that never committed: \(changes)")
            }
            // And the library takes the same write again.
            if kind != "import" && kind != "mirror" { try ok(library, arguments, stdin: stdin) }
        }
    }

    // MARK: Damaged files

    /// Overwrites the root page of every b-tree `pick` accepts, so that any read of those
    /// tables or indexes meets a page SQLite knows is wrong.
    func damage(_ file: URL, where pick: (_ name: String, _ table: String) -> Bool) throws {
        let roots: [Int]
        let pageSize: Int
        do {
            // The command that wrote last exits without closing its connection, so its pages
            // may still be in the WAL: move them into the file, where the damage goes.
            let db = try Connection(path: file.path)
            try db.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
            pageSize = try db.scalar(Int.self, "PRAGMA page_size") ?? 4_096
            roots = try db.query("SELECT name, tbl_name, rootpage FROM sqlite_master WHERE rootpage > 1") { row in
                (try row.string(0), try row.string(1), Int(try row.int64(2)))
            }.filter { pick($0.0, $0.1) }.map(\.2)
        }
        #expect(!roots.isEmpty)
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: file.path + "-wal"))?[.size] as? Int ?? 0
        #expect(walBytes == 0, "every change is in the file itself")
        let handle = try FileHandle(forWritingTo: file)
        for root in roots {
            try handle.seek(toOffset: UInt64((root - 1) * pageSize))
            try handle.write(contentsOf: Data(repeating: 0xFF, count: pageSize))
        }
        try handle.close()
    }

    @Test func aDamagedMirrorIsRebuiltAndTheAnswersStayRight() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try makeLibrary(library, music: dir.path("music"), tracks: 30)
            let expected = try ok(library, ["tracks", "--sort", "title", "--limit", "50", "--json"])
            try damage(library.appendingPathComponent("mirror.sqlite")) { name, _ in name != "mirror_meta" && !name.hasPrefix("sqlite_autoindex_mirror_meta") }

            // The query meets the damage, answers from the store instead, and the mirror is set to rebuild.
            let answered = try shelf(library, ["tracks", "--sort", "title", "--limit", "50", "--json"])
            #expect(answered.status == 0, "\(answered.stderr)")
            #expect(answered.stdout == expected)
            let status = try #require(
                try JSONSerialization.jsonObject(with: Data(try ok(library, ["mirror", "status", "--json"]).utf8)) as? [String: Any])
            #expect(status["state"] as? String == "building", "\(status)")
            try ok(library, ["mirror", "build"])
            #expect(try Connection(path: library.appendingPathComponent("mirror.sqlite").path, mode: .readOnly).integrityCheck().isEmpty)
            #expect(try ok(library, ["tracks", "--sort", "title", "--limit", "50", "--json"]) == expected)
            #expect(try integrity(library).isEmpty, "the store was never touched")
        }
    }

    @Test func aDamagedStoreIsReportedWithTheWayToRestoreAndNeverShrunk() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try makeLibrary(library, music: dir.path("music"))
            let backup = dir.path("good.shelfbackup")
            try ok(library, ["backup", "--to", backup.path])
            let expected = try state(library)
            let store = library.appendingPathComponent("library.sqlite")
            try damage(store) { _, table in table == "track" }
            let damaged = try Data(contentsOf: store)

            for arguments in [["info"], ["import", dir.path("music").path]] {
                let result = try shelf(library, arguments)
                #expect(result.status == 2, "\(arguments): \(result.stdout)")
                #expect(result.stderr.contains("is damaged") && result.stderr.contains("restore"), "\(arguments): \(result.stderr)")
            }
            let json = try shelf(library, ["info", "--json"])
            #expect(json.stdout.contains("\"storeDamaged\""), "\(json.stdout)")
            let doctor = try shelf(library, ["doctor", "--json"])
            #expect(doctor.status == 2)
            let checks = try #require(try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])["checks"] as? [[String: Any]]
            let storeCheck = try #require(checks?.first { $0["name"] as? String == "store" })
            #expect(storeCheck["status"] as? String == "error", "\(storeCheck)")
            #expect((storeCheck["advice"] as? String ?? "").contains("restore"), "\(storeCheck)")
            // Nothing rewrote the damaged file into something smaller.
            #expect(try Data(contentsOf: store) == damaged)

            let restored = try shelf(library, ["restore", backup.path, "--force"])
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(try state(library) == expected)
        }
    }

    // MARK: Full disk

    /// A tmpfs of 8 MiB as the library directory, filled until a little space is left: an import,
    /// an edit, a backup and a mirror build that need more fail with a clear error, leave the
    /// library as it was before the failed transaction, and all work once space is freed.
    @Test func aFullDiskFailsCleanlyAndRecovers() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let mount = dir.path("disk")
            try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
            guard getuid() == 0,
                try ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=8m", "shelf-drill", mount.path]).status == 0
            else {
                print("skipped: the full-disk drill mounts a tmpfs, which needs root")
                return
            }
            defer { _ = try? ChildProcess.run(URL(fileURLWithPath: "/bin/umount"), [mount.path]) }
            let library = mount.appendingPathComponent("library")
            try makeLibrary(library, music: dir.path("music"))
            try sampleFiles(40, into: dir.path("more"), seconds: 0.4)
            let filler = mount.appendingPathComponent("filler")

            /// Fills the disk, then gives back `free` bytes.
            func fill(leaving free: Int) throws {
                let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                #expect(fd >= 0)
                let block = [UInt8](repeating: 0xA5, count: 4_096)
                var size = 0
                while true {
                    let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    size += n
                }
                #expect(errno == ENOSPC)
                #expect(ftruncate(fd, off_t(max(0, size - free))) == 0)
                close(fd)
            }
            func freeAll() { unlink(filler.path) }

            let long = String(repeating: "a comment far longer than any tag ", count: 2_000)
            let attempts: [(String, [String])] = [
                ("import", ["import", dir.path("more").path]),
                ("edit", ["edit", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "--set", "comment=\(long)"]),
                ("backup", ["backup", "--to", mount.appendingPathComponent("full.shelfbackup").path]),
                ("mirror", ["mirror", "build", "--fresh"]),
            ]
            for (kind, arguments) in attempts {
                let before = try state(library)
                try fill(leaving: 96 * 1_024)
                let result = try shelf(library, arguments)
                freeAll()
                #expect(result.status == 2, "\(kind) succeeded on a full disk: \(result.stdout)")
                #expect(result.stderr.contains("no space left"), "\(kind): \(result.stderr)")
                #expect(try integrity(library).isEmpty, "\(kind)")
                let after = try state(library)
                if kind == "import" {
                    // An import commits chunk by chunk: the chunks before the full disk stay, whole.
                    #expect(after[1...3] == before[1...3])
                } else {
                    #expect(after == before, "\(kind): the failed transaction left a trace")
                }
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { $0.contains("shelfbackup") }
                #expect(leftovers.isEmpty, "\(kind): \(leftovers)")
            }
            // With space again, every one of them works.
            for (_, arguments) in attempts { try ok(library, arguments) }
            let tracks = try #require(try JSONSerialization.jsonObject(with: Data(try ok(library, ["tracks", "--json"]).utf8)) as? [String: Any])
            #expect(tracks["total"] as? Int == 12 + 40)
            #expect(try ok(library, ["track", "3"]).contains("a comment far longer"))
            #expect(try integrity(library).isEmpty)
        }
    }
}
