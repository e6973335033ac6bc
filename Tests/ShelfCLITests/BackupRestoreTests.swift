import Foundation
import ShelfDatabase
import ShelfTestSupport
import Testing

/// `shelf backup` while other processes import and edit, and `shelf restore`: the restored
/// library equals the source at one commit point, never a mix; the key travels inside a 0600
/// file; restores refuse a non-empty directory unless --force, which moves it aside.
@Suite struct BackupRestoreTests: ShelfRunner {
    let products = ChildProcess.productsDirectory()

    /// Everything a library answers, with store IDs taken out of tokens (a restore gives the
    /// store a new ID; positions must match, IDs need not).
    func state(_ library: URL, since token: String) throws -> [String] {
        let texts = try [
            ok(library, ["tracks", "--limit", "1000", "--json"]), ok(library, ["playlist", "list", "--json"]),
            ok(library, ["user", "list", "--json"]), ok(library, ["changes", "--since", token, "--json"]),
            ok(library, ["token"]),
        ]
        let storeID = try NSRegularExpression(pattern: "shelf1\\.[0-9a-f-]{36}\\.")
        return texts.map { text in
            storeID.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "shelf1.STORE.")
        }
    }

    @Test func aBackupTakenWhileOthersWriteRestoresToOneCommitPoint() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try sampleFiles(24, into: dir.path("music"))
            try ok(library, ["import", dir.path("music").path])
            try ok(library, ["user", "add", "ann", "--admin", "--password-stdin"], stdin: "first-password\n")
            try ok(library, ["playlist", "create", "Road"])
            try ok(library, ["playlist", "add", "1", "3", "5", "7"])
            let start = try ok(library, ["token"]).trimmingCharacters(in: .whitespacesAndNewlines)
            // The backup copies a page per step and halts itself after its first step: its snapshot is
            // taken, most of the store not yet copied.
            let before = try state(library, since: start)
            let backup = dir.path("during.shelfbackup")
            let paused = try PausedChild.start(
                products.appendingPathComponent("shelf"), ["--library", library.path, "backup", "--to", backup.path, "--step", "1", "--json"],
                environment: ["SHELF_PROGRESS": "lines", "SHELF_PROGRESS_STOP_AT": "backup@1"], until: "progress backup ")

            // Other processes write while it is stopped mid-copy: an import, an edit batch, a playlist
            // change, a user change, each its own commit.
            try sampleFiles(6, into: dir.path("more"), seconds: 0.4)
            try ok(library, ["import", dir.path("more").path])
            try ok(library, ["edit", "1", "2", "3", "--set", "comment=edited during the backup", "--set", "year=1999"])
            try ok(library, ["playlist", "add", "1", "2", "4"])
            try ok(library, ["user", "add", "bob", "--password-stdin"], stdin: "second-password\n")
            let after = try state(library, since: start)
            #expect(after != before)

            let finished = try paused.resume()
            #expect(finished.status == 0, "\(finished.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(finished.stdout.utf8)) as? [String: Any])
            #expect(report["includesSecretKey"] as? Bool == true)
            #expect(report["trackCount"] as? Int == 24)
            var info = stat()
            #expect(stat(backup.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "the backup holds the key: mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(try Connection(path: backup.path, mode: .readOnly).integrityCheck().isEmpty)

            // Restored, it is the library at the backup's snapshot: none of the later commits, all of
            // the earlier ones, the history's positions included.
            let restored = dir.path("restored")
            let restore = try json(restored, ["restore", backup.path])
            #expect(restore["trackCount"] as? Int == 24)
            #expect(restore["restoredSecretKey"] as? Bool == true)
            #expect(try state(restored, since: start) == before)
            // The password decrypts with the restored key: the key came along.
            #expect(try ok(restored, ["user", "list"]).contains("ann"))
            let mirror = try json(restored, ["mirror", "status"])
            #expect(mirror["state"] as? String == "ready")

            // A backup taken now holds every later commit.
            let later = dir.path("after.shelfbackup")
            try ok(library, ["backup", "--to", later.path])
            let second = dir.path("restored-after")
            try ok(second, ["restore", later.path])
            #expect(try state(second, since: start) == after)
        }
    }

    @Test func restoreRefusesANonEmptyDirectoryAndForceMovesItAside() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try sampleFiles(5, into: dir.path("music"))
            try ok(library, ["import", dir.path("music").path])
            let backup = dir.path("one.shelfbackup")
            try ok(library, ["backup", "--to", backup.path])
            try ok(library, ["edit", "1", "--set", "title=Changed after the backup"])
            let oldToken = try ok(library, ["token"]).trimmingCharacters(in: .whitespacesAndNewlines)

            let refused = try shelf(library, ["restore", backup.path])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("not empty") && refused.stderr.contains("--force"), "\(refused.stderr)")
            #expect(try ok(library, ["track", "1"]).contains("Changed after the backup"), "a refused restore leaves the library alone")

            let forced = try json(library, ["restore", backup.path, "--force"])
            let aside = try #require(forced["movedAside"] as? String)
            #expect(FileManager.default.fileExists(atPath: aside + "/library.sqlite"))
            #expect(try !ok(library, ["track", "1"]).contains("Changed after the backup"))
            #expect(try ok(URL(fileURLWithPath: aside), ["track", "1"]).contains("Changed after the backup"), "the old library is kept whole")

            // The edit the restore undid: its token answers expired; the backup's own position works.
            let expired = try shelf(library, ["changes", "--since", oldToken, "--json"])
            #expect(expired.status == 2)
            #expect(expired.stdout.contains("tokenExpired") || expired.stderr.contains("restored from a backup"), "\(expired.stderr)")
            let restoredToken = try #require(forced["restoredToken"] as? String)
            #expect(try shelf(library, ["changes", "--since", restoredToken]).status == 0)
        }
    }

    /// The shipped layout: backups in a folder inside the library directory, restored with
    /// --force, which moves that folder aside with the library before the copy is read.
    @Test func aBackupInsideTheLibraryDirectoryRestoresWithForce() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("library")
            try sampleFiles(4, into: dir.path("music"))
            try ok(library, ["import", dir.path("music").path])
            try FileManager.default.createDirectory(at: library.appendingPathComponent("backups"), withIntermediateDirectories: true)
            let backup = library.appendingPathComponent("backups/inside.shelfbackup")
            try ok(library, ["backup", "--to", backup.path])
            try ok(library, ["edit", "2", "--set", "title=After the backup"])
            let restored = try json(library, ["restore", backup.path, "--force"])
            #expect(restored["trackCount"] as? Int == 4)
            #expect(try !ok(library, ["track", "2"]).contains("After the backup"))
            let aside = try #require(restored["movedAside"] as? String)
            #expect(FileManager.default.fileExists(atPath: aside + "/backups/inside.shelfbackup"))

            // Nor can a backup be written over the library's own files.
            for name in ["library.sqlite", "secret.key", "mirror.sqlite"] {
                let refused = try shelf(library, ["backup", "--to", library.appendingPathComponent(name).path])
                #expect(refused.status == 2)
                #expect(refused.stderr.contains("library's own files"), "\(name): \(refused.stderr)")
            }
            #expect(try shelf(library, ["backup", "--to", dir.url.path]).stderr.contains("is a folder"))
            #expect(try ok(library, ["info"]).contains("tracks:         4"))
        }
    }

    @Test func badBackupsAreRefusedBeforeAnythingIsTouched() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let target = dir.path("target")
            let notABackup = dir.path("plain.sqlite")
            let db = try Connection(path: notABackup.path)
            try db.execute(script: "CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            let garbage = dir.path("garbage.shelfbackup")
            try Data(repeating: 0x5A, count: 8_192).write(to: garbage)
            for (file, words) in [(notABackup, "not a Shelf backup"), (garbage, "not a readable SQLite file"), (dir.path("absent"), "does not exist")] {
                let result = try shelf(target, ["restore", file.path])
                #expect(result.status == 2)
                #expect(result.stderr.contains(words), "\(file.lastPathComponent): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: target.appendingPathComponent("library.sqlite").path))
            }
            // A backup into a folder that does not exist fails and leaves nothing behind.
            try sampleFiles(2, into: dir.path("music"))
            let library = dir.path("library")
            try ok(library, ["import", dir.path("music").path])
            let failed = try shelf(library, ["backup", "--to", dir.path("no/such/folder/x.shelfbackup").path])
            #expect(failed.status == 2)
            #expect(failed.stderr.contains("does not exist"), "\(failed.stderr)")
        }
    }
}

/// A child process that halts itself at a known point (SIGSTOP) and is resumed by the test.
struct PausedChild {
    let process: Process
    let stdout: Pipe
    let stderr: Pipe
    let linesSoFar: [String]

    /// Starts `executable` and reads its stderr until a line starting with `marker`, then waits
    /// until the kernel reports it stopped.
    static func start(_ executable: URL, _ arguments: [String], environment: [String: String], until marker: String) throws -> PausedChild {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let lines = ChildProcess.forEachLine(of: err.fileHandleForReading) { !$0.hasPrefix(marker) }
        #expect(lines.last?.hasPrefix(marker) == true, "the child never reached \(marker): \(lines)")
        // It prints the line, then stops itself: wait for the stop, a point it is known to reach.
        let stat = "/proc/\(process.processIdentifier)/stat"
        while process.isRunning {
            let text = (try? String(contentsOfFile: stat, encoding: .utf8)) ?? ""
            if let close = text.lastIndex(of: ")"), text[text.index(close, offsetBy: 2)] == "T" { break }
            usleep(1_000)
        }
        return PausedChild(process: process, stdout: out, stderr: err, linesSoFar: lines)
    }

    /// Continues the child and waits for it to end.
    func resume() throws -> ProcessResult {
        kill(process.processIdentifier, SIGCONT)
        var result = ChildProcess.finish(process, stdout: stdout, stderr: stderr)
        result.stderr = (linesSoFar + [result.stderr]).joined(separator: "\n")
        return result
    }
}
