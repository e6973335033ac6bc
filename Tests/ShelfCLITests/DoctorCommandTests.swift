import Foundation
import ShelfTestSupport
import Testing

/// `shelf doctor` end to end: every check on a fresh library, a key file anyone may read failing
/// the run with the line that fixes it, and a directory without a library left exactly as it was.
@Suite struct DoctorCommandTests {
    let products = ChildProcess.productsDirectory()
    /// The checks, in the order they print.
    static let names = ["config", "library", "store", "mirror", "secretKey", "musicRoots", "inotify", "ffmpeg", "ffprobe", "systemd"]
    static let statuses: Set<String> = ["ok", "warning", "error", "skipped"]

    /// Runs `shelf --library LIBRARY …` with no config file of this machine's (an empty config
    /// folder, and not a systemd service, so /etc/shelf/config.toml is not read either).
    func shelf(_ library: URL, _ arguments: [String], config: URL, stdin: String? = nil) throws -> ProcessResult {
        try ChildProcess.run(
            products.appendingPathComponent("shelf"), ["--library", library.path] + arguments,
            environment: ["XDG_CONFIG_HOME": config.path, "INVOCATION_ID": "", "NOTIFY_SOCKET": ""], stdin: stdin.map { Data($0.utf8) })
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The checks of a `doctor --json` document, by name.
    func checks(_ document: [String: Any]) throws -> [String: [String: Any]] {
        let list = try #require(document["checks"] as? [[String: Any]])
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    /// A library imported from three generated files, in `dir/lib`.
    func importedLibrary(_ dir: TemporaryDirectory) throws -> URL {
        let album = dir.path("music/album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for index in 0..<3 { try TestAudio.wav(seconds: 0.2, frequency: 300 + Double(index) * 10).write(to: album.appendingPathComponent("\(index).wav")) }
        let library = dir.path("lib")
        let imported = try shelf(library, ["import", dir.path("music").path], config: dir.path("config"))
        #expect(imported.status == 0, "\(imported.stderr)")
        return library
    }

    /// Every file and folder under `url`, relative to it.
    func listing(_ url: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: url.path).sorted()
    }

    @Test func freshLibraryPassesEveryCheck() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = try importedLibrary(dir)
            let result = try shelf(library, ["doctor", "--json"], config: dir.path("config"))
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let document = try json(result.stdout)
            let list = try #require(document["checks"] as? [[String: Any]])
            #expect(list.compactMap { $0["name"] as? String } == Self.names)
            for check in list {
                let status = check["status"] as? String ?? ""
                #expect(Self.statuses.contains(status), "\(check)")
                #expect(status != "error", "\(check)")
                #expect(!(check["detail"] as? String ?? "").isEmpty, "\(check)")
                // Advice only where there is something to do.
                #expect((check["advice"] as? String)?.isEmpty == (status == "ok" || status == "skipped"), "\(check)")
            }
            #expect(document["errors"] as? Int == 0)
            #expect(document["warnings"] as? Int == list.filter { $0["status"] as? String == "warning" }.count)
            let byName = try checks(document)
            for name in ["store", "mirror", "secretKey", "musicRoots"] {
                #expect(byName[name]?["status"] as? String == "ok", "\(name): \(byName[name] ?? [:])")
            }
            #expect((byName["store"]?["detail"] as? String)?.contains("quick_check ok") == true)
            #expect((byName["musicRoots"]?["detail"] as? String)?.contains(dir.path("music").path) == true)
            #expect(byName["config"]?["status"] as? String == "skipped")

            // The text form: one line per check, its state first.
            let text = try shelf(library, ["doctor"], config: dir.path("config"))
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("\nok       store         "), "\(text.stdout)")
            let warnings = document["warnings"] as? Int ?? -1
            #expect(text.stdout.hasSuffix("\n\n0 errors, \(warnings) warning\(warnings == 1 ? "" : "s")\n"), "\(text.stdout)")
        }
    }

    @Test func keyFileOthersMayReadFailsWithItsChmod() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = try importedLibrary(dir)
            let added = try shelf(library, ["user", "add", "ann", "--admin", "--password-stdin"], config: dir.path("config"), stdin: "secret\n")
            #expect(added.status == 0, "\(added.stderr)")
            let key = library.appendingPathComponent("secret.key")
            #expect(FileManager.default.fileExists(atPath: key.path))
            let before = try checks(try json(try shelf(library, ["doctor", "--json"], config: dir.path("config")).stdout))
            #expect(before["secretKey"]?["status"] as? String == "ok", "\(before["secretKey"] ?? [:])")

            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key.path)
            let result = try shelf(library, ["doctor", "--json"], config: dir.path("config"))
            // A failed check is a failure: status 2, one line on stderr naming it.
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("shelf: doctor: 1 check failed: secretKey"), "\(result.stderr)")
            let document = try json(result.stdout)
            #expect(document["errors"] as? Int == 1)
            let check = try #require(try checks(document)["secretKey"])
            #expect(check["status"] as? String == "error")
            #expect((check["detail"] as? String)?.contains("644") == true, "\(check)")
            let advice = try #require(check["advice"] as? String)
            #expect(advice.contains("chmod 600") && advice.contains("secret.key"), "\(advice)")

            let text = try shelf(library, ["doctor"], config: dir.path("config"))
            #expect(text.status == 2)
            #expect(text.stdout.contains("\nerror    secretKey     "), "\(text.stdout)")
            #expect(text.stdout.contains("→ chmod 600 "), "\(text.stdout)")
        }
    }

    @Test func emptyDirectoryIsLeftAsItWas() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let empty = dir.path("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            let before = try listing(dir.url)
            let result = try shelf(empty, ["doctor", "--json"], config: dir.path("config"))
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(try listing(empty).isEmpty)
            #expect(try listing(dir.url) == before)
            let document = try json(result.stdout)
            let byName = try checks(document)
            #expect(byName["store"]?["status"] as? String == "warning")
            #expect((byName["store"]?["detail"] as? String)?.contains("no library yet at \(empty.path)") == true, "\(byName["store"] ?? [:])")
            #expect((byName["store"]?["advice"] as? String)?.contains("shelf import DIR") == true)
            #expect(byName["mirror"]?["status"] as? String == "skipped")
            #expect(byName["secretKey"]?["status"] as? String == "ok")

            // A directory that does not exist is not made either.
            let missing = dir.path("missing/library")
            let absent = try shelf(missing, ["doctor"], config: dir.path("config"))
            #expect(absent.status == 0, "\(absent.stderr)")
            #expect(absent.stdout.contains("no library yet"))
            #expect(!FileManager.default.fileExists(atPath: dir.path("missing").path))
            #expect(try listing(dir.url) == before)
        }
    }
}
