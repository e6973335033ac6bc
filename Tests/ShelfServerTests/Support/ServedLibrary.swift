import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// A library of real audio files (with covers) imported by `shelf`, with an admin `ann`
/// (the owner) and a plain user `bob`, in a temporary directory.
struct ServedLibrary {
    let root: URL
    var library: String { root.appendingPathComponent("library").path }
    var music: String { root.appendingPathComponent("music").path }
    static let annPassword = "ann's secret"
    static let bobPassword = "bob-pass"

    static func shelfBinary() -> URL { ChildProcess.productsDirectory().appendingPathComponent("shelf") }

    /// `tracks` sample files of `seconds` each (long enough, at 3, for a page to be seen playing).
    init(tracks: Int = 12, seconds: Double? = nil) throws {
        try self.init { music in
            let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
            let written = try ChildProcess.run(
                bench, ["sample-files", "--tracks", "\(tracks)", "--dir", music] + (seconds.map { ["--seconds", "\($0)"] } ?? []))
            try #require(written.status == 0, "\(written.stderr)")
        }
    }

    /// The files `write` puts in the music folder (its path), imported, with ann (an admin) and bob.
    init(writing write: (String) throws -> Void) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try write(music)
        let imported = try shelf(["import", music])
        try #require(imported.status == 0, "\(imported.stderr)")
        try #require(try shelf(["user", "add", "ann", "--admin", "--password-stdin"], stdin: Self.annPassword + "\n").status == 0)
        try #require(try shelf(["user", "add", "bob", "--password-stdin"], stdin: Self.bobPassword + "\n").status == 0)
    }

    /// Runs `shelf --library … ARGS`.
    func shelf(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try ChildProcess.run(Self.shelfBinary(), ["--library", library] + arguments, stdin: stdin.map { Data($0.utf8) })
    }

    /// `shelf … --json` parsed.
    func json(_ arguments: [String]) throws -> Any {
        let result = try shelf(arguments + ["--json"])
        try #require(result.status == 0, "\(arguments): \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

/// Two JSON values compared as values (key order and number spelling aside).
func sameJSON(_ a: Any?, _ b: Any?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return NSDictionary(dictionary: ["v": a]).isEqual(to: ["v": b])
}

/// Signs `ann` (or another) in and returns a client holding the session cookie.
func signedIn(_ server: ServerProcess, _ name: String = "ann", _ password: String = ServedLibrary.annPassword) throws -> Curl {
    let client = Curl(base: server.base)
    let result = try client.request("POST", "/api/session", body: Curl.json(["name": name, "password": password]))
    try #require(result.status == 200, "sign-in: \(result.status) \(result.text)")
    return client
}

/// The `error.code` of a JSON error document.
func errorCode(_ body: String) -> String? {
    guard let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
        let error = json["error"] as? [String: Any]
    else { return nil }
    return error["code"] as? String
}

/// Splits curl's `-w "\n%{http_code}"` output into body and status.
func split(_ result: ProcessResult) -> (body: String, status: Int) {
    guard let newline = result.stdout.lastIndex(of: "\n") else { return ("", Int(result.stdout) ?? 0) }
    return (String(result.stdout[..<newline]), Int(result.stdout[result.stdout.index(after: newline)...]) ?? 0)
}
