import Foundation
import ShelfTestSupport
import Testing

/// What the end-to-end suites that drive `shelf` on a library share: running it, expecting it to
/// succeed, reading its JSON, and writing tagged sample files with `shelf-bench`.
protocol ShelfRunner {
    var products: URL { get }
}

extension ShelfRunner {
    func shelf(_ library: URL, _ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", library.path] + arguments, stdin: stdin.map { Data($0.utf8) })
    }

    /// Its stdout, after expecting exit status 0.
    @discardableResult
    func ok(_ library: URL, _ arguments: [String], stdin: String? = nil) throws -> String {
        let result = try shelf(library, arguments, stdin: stdin)
        #expect(result.status == 0, "shelf \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout
    }

    /// The command's `--json` document as a dictionary.
    func json(_ library: URL, _ arguments: [String]) throws -> [String: Any] {
        let text = try ok(library, arguments + ["--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(arguments): \(text)")
    }

    /// Tagged files; each `seconds` gives other audio, so that a second folder is new music, not
    /// duplicates of the first.
    func sampleFiles(_ count: Int, into folder: URL, seconds: Double = 0.3) throws {
        let made = try ChildProcess.run(
            products.appendingPathComponent("shelf-bench"),
            ["sample-files", "--tracks", String(count), "--tagged", "--dir", folder.path, "--seconds", String(seconds)])
        #expect(made.status == 0, "\(made.stderr)")
    }
}
