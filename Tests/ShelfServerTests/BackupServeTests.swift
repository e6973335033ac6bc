import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// `shelf serve`'s backups (`backup-dir`, `backup-keep`, `backup-every`): taken on an admin's
/// request and on the schedule, rotated to the newest few, private, restorable with `shelf
/// restore`, listed by facts only; a failing folder is logged and the server goes on.
@Suite(.serialized) struct BackupServeTests {
    static let write = ["X-Shelf-Request": "1"]

    /// A config file in the fixture's folder with `text`, for `--config`.
    static func config(_ fixture: ServedLibrary, _ text: String) throws -> String {
        let file = fixture.root.appendingPathComponent("shelf.toml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o777
    }

    /// The backup files in `folder`, by name.
    static func backupFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("shelf-") && $0.hasSuffix(".shelfbackup") }.sorted()
    }

    @Test func backupsOnRequestRotateStayPrivateAndRestore() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let folder = fixture.root.appendingPathComponent("backups")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // A backup from just now is in the folder already, so the schedule's first backup is a
            // day away and cannot interleave with the ones this test asks for.
            let seed = folder.appendingPathComponent(BackupFolder.fileName(for: Date())).path
            let seeded = try fixture.shelf(["backup", "--to", seed])
            try #require(seeded.status == 0, "\(seeded.stderr)")
            let config = try Self.config(fixture, "backup-dir = \"\(folder.path)\"\nbackup-keep = 2\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            #expect(server.waitForLine { $0.contains("shelf: backup: every 1d into \(folder.path), keeping the newest 2") } != nil, "\(server.log)")

            // Admins only, both ways.
            #expect(try Curl(base: server.base).request("GET", "/api/backups").status == 401)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            #expect(try bob.request("GET", "/api/backups").status == 403)
            #expect(try bob.request("POST", "/api/backups", headers: Self.write).status == 403)
            #expect(try Self.backupFiles(folder) == [URL(fileURLWithPath: seed).lastPathComponent])

            let ann = try signedIn(server)
            let tracks = try #require((try ann.request("GET", "/api/info").json as? [String: Any])?["trackCount"] as? Int)
            #expect(tracks == 4)
            let before = try #require(try ann.request("GET", "/api/backups").json as? [String: Any])
            #expect(before["directory"] as? String == folder.path)
            #expect(before["keep"] as? Int == 2)
            #expect(before["every"] as? Int == 86_400)
            #expect(before["running"] as? Bool == false)
            #expect(before["lastRun"] is NSNull && before["lastError"] is NSNull, "\(before)")
            #expect((before["backups"] as? [[String: Any]])?.count == 1)

            // Three on request: each answers its report; the folder keeps the newest two.
            var reports: [[String: Any]] = []
            for _ in 0..<3 {
                let taken = try ann.request("POST", "/api/backups", headers: Self.write)
                #expect(taken.status == 201, "\(taken.text)")
                let report = try #require(taken.json as? [String: Any], "\(taken.text)")
                #expect(report["trackCount"] as? Int == tracks)
                #expect(report["includesSecretKey"] as? Bool == true)
                #expect((report["path"] as? String)?.hasPrefix(folder.path + "/shelf-") == true, "\(report)")
                reports.append(report)
            }
            let names = reports.compactMap { ($0["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } }
            #expect(Set(names).count == 3, "\(names)")  // two within one second get -2, never the same name
            #expect(try Self.backupFiles(folder) == Array(names.suffix(2)).sorted())

            let answer = try ann.request("GET", "/api/backups")
            let after = try #require(answer.json as? [String: Any])
            let listed = try #require(after["backups"] as? [[String: Any]])
            #expect(listed.map { $0["name"] as? String } == [names[2], names[1]], "\(listed)")
            #expect(after["lastRun"] is String && after["lastError"] is NSNull, "\(after)")
            // Facts only: no key, nothing to download.
            let allowed: Set<String> = ["name", "path", "bytes", "created", "schemaVersion", "trackCount", "includesSecretKey", "error"]
            for entry in listed {
                #expect(Set(entry.keys).isSubset(of: allowed), "\(entry.keys)")
                #expect(entry["trackCount"] as? Int == tracks)
                #expect(entry["includesSecretKey"] as? Bool == true)
                #expect(entry["created"] is String)
                #expect((entry["bytes"] as? Int ?? 0) > 0)
            }
            #expect(try ann.request("GET", "/api/backups/\(names[2])").status == 404)
            #expect(try ann.request("GET", "/api/backups/\(names[2])/download").status == 404)
            #expect(server.waitForLine { $0.contains("shelf: backup (asked by ann): \(folder.path)/\(names[0])") } != nil, "\(server.log)")

            // Each one kept is private and comes back whole.
            for (index, entry) in listed.enumerated() {
                let path = try #require(entry["path"] as? String)
                #expect(Self.mode(path) == 0o600, "\(path): \(String(Self.mode(path), radix: 8))")
                let target = fixture.root.appendingPathComponent("restored-\(index)").path
                let restored = try ChildProcess.run(ServedLibrary.shelfBinary(), ["--library", target, "restore", path, "--json"])
                #expect(restored.status == 0, "\(restored.stderr)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(restored.stdout.utf8)) as? [String: Any])
                #expect(report["trackCount"] as? Int == tracks)
                #expect(report["restoredSecretKey"] as? Bool == true)
            }
            // Not over the library the server has open: it would go on writing into the old one.
            let busy = try fixture.shelf(["restore", try #require(listed.first?["path"] as? String), "--force"])
            #expect(busy.status == 2)
            #expect(busy.stderr.contains("open in another process"), "\(busy.stderr)")
            #expect(try fixture.shelf(["info"]).status == 0, "the refused restore left the library in place")
        }
    }

    @Test func withoutABackupFolderTheListIsEmptyAndARequestIsRefused() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let status = try #require(try ann.request("GET", "/api/backups").json as? [String: Any])
            #expect(status["directory"] is NSNull, "\(status)")
            #expect((status["backups"] as? [Any])?.isEmpty == true)
            #expect(status["keep"] as? Int == 7 && status["every"] as? Int == 86_400)
            let refused = try ann.request("POST", "/api/backups", headers: Self.write)
            #expect(refused.status == 409)
            let error = (refused.json as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "noBackupDir", "\(refused.text)")
            #expect((error?["message"] as? String)?.contains("backup-dir") == true)
        }
    }

    /// The schedule itself, with a one-second interval: the test waits for the log line of the
    /// third backup's rotation (a point it knows is reached), then stops the server.
    @Test func theScheduleMakesItsFolderAndRotates() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let folder = fixture.root.appendingPathComponent("made/by/server")
            let config = try Self.config(fixture, "backup-dir = \"\(folder.path)\"\nbackup-keep = 2\nbackup-every = 1\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            #expect(server.waitForLine(timeout: 120) { $0.contains("shelf: backup: deleted shelf-") } != nil, "\(server.log)")
            #expect(server.stop() == 0)
            #expect(Self.mode(folder.path) == 0o700, "\(String(Self.mode(folder.path), radix: 8))")
            // Stopped between backups or in one (which then leaves no file): the rotation has run after each.
            let files = try Self.backupFiles(folder)
            #expect(files.count == 2, "\(files)")
            for name in files { #expect(Self.mode(folder.appendingPathComponent(name).path) == 0o600, "\(name)") }
            #expect(server.log.filter { $0.contains("shelf: backup (scheduled): \(folder.path)/shelf-") }.count >= 3)
            // No partial copy is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }.isEmpty)
        }
    }

    @Test func aFolderThatCannotBeMadeIsLoggedAndTheServerGoesOn() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let file = fixture.root.appendingPathComponent("a-file")
            try Data("x".utf8).write(to: file)
            let config = try Self.config(fixture, "backup-dir = \"\(file.path)/backups\"\nbackup-every = 1\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            // The start and then each scheduled run fail, each saying so; the next run tries again.
            #expect(server.waitForLine(timeout: 120) { $0.contains("shelf: backup (scheduled) error: ") } != nil, "\(server.log)")
            let ann = try signedIn(server)
            let status = try #require(try ann.request("GET", "/api/backups").json as? [String: Any])
            #expect((status["lastError"] as? String)?.contains("\(file.path)/backups") == true, "\(status)")
            #expect((status["backups"] as? [Any])?.isEmpty == true)
            let refused = try ann.request("POST", "/api/backups", headers: Self.write)
            #expect(refused.status == 500 || refused.status == 409, "\(refused.text)")
            #expect(try ann.request("GET", "/api/me").status == 200)
            #expect(server.stop() == 0)
        }
    }
}
