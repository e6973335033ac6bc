import Foundation
import Shelf
import ShelfServer

/// `shelf doctor`: checks what a running library needs, from ffmpeg to the inotify limits, and
/// says what to do about each problem; reads everything as it is and writes nothing.
struct DoctorCommand: Command {
    static let name = "doctor"
    static let abstract =
        "Check what a running library needs (its directory, store, mirror, secret.key, music roots, inotify limits, ffmpeg, systemd) and say what to do; exit 2 when a check fails."
    static let synopsis = "[--config FILE] [--json]"
    static let discussion = """
        Runs read-only checks and prints one line per check with its state (ok, warning, error or skipped) and, \
        when something needs doing, the line that does it: the config file `shelf serve` would read (or --config); \
        the library directory (writable, free space against the store's size); the store (its schema version \
        against this build's, and PRAGMA quick_check, which reads the whole store); the read mirror; secret.key \
        (mode 600 and its owner); the music roots (offline or unreadable); fs.inotify.max_user_watches against \
        the folders under the roots; ffmpeg and ffprobe with their versions; and shelf.service when systemd \
        knows it. Nothing is created, migrated or built: a directory without a store is reported as no library \
        yet. The library is --library, else SHELF_LIBRARY, else the config file's `library`, else the default, \
        as for `shelf serve`; run it as the user the server runs as. With --json: {"checks": [{"name": …, \
        "status": …, "detail": …, "advice": …}], "errors": N, "warnings": N}. Exit status 0 when no check is an error \
        (warnings allowed), 2 when one is.
        """
    static let flags = [
        FlagHelp(
            "--config", "FILE",
            "The `shelf serve` config file to check; its music folders are checked too, and its `library` unless --library or SHELF_LIBRARY names one.",
            default: "the file `shelf serve` would read, else none", completes: .file)
    ]
    static let examples = [
        "shelf doctor", "shelf --library /var/lib/shelf doctor --json", "sudo -u shelf shelf doctor --config /etc/shelf/config.toml",
    ]

    /// The config file read (`--config`, else the one `shelf serve` would read), nil when there is none.
    let configPath: String?
    /// What the file sets, as far as it could be read; nil without a file.
    let config: ServerConfig?
    /// The file's mistakes: a check of their own, never a reason not to run the others.
    let configErrors: [ConfigError]

    init(arguments: inout Arguments) throws {
        let explicit = try arguments.option("--config")
        _ = try arguments.positionals().first.map { throw UsageError("doctor takes no words, got '\($0)'") }
        let path = explicit ?? ServerConfig.defaultPath()
        configPath = path
        if let path {
            // Read here, before the library is chosen, because the file may name it (as for serve).
            let (config, errors) = ServerConfig.check(ConfigReader.read(path: path), file: path)
            self.config = config
            configErrors = errors
        } else {
            config = nil
            configErrors = []
        }
    }

    /// The config's `library`, used when neither --library nor SHELF_LIBRARY names one.
    var libraryDirectory: URL? { config?.library.map { URL(fileURLWithPath: $0) } }

    /// `shelf doctor --json`.
    struct Document: Encodable {
        let checks: [DoctorCheck]
        let errors: Int
        let warnings: Int
    }

    func run(library: Library, output: Output) async throws {
        let inspection: Result<LibraryInspection?, any Error>
        do {
            inspection = .success(try await library.inspect())
        } catch {
            inspection = .failure(error)
        }
        let checks = DoctorChecks(
            directory: library.directory, inspection: inspection, configPath: configPath, config: config, configErrors: configErrors,
            environment: ProcessInfo.processInfo.environment
        ).run()
        let failed = checks.filter { $0.status == .error }
        let warnings = checks.filter { $0.status == .warning }.count
        if output.json {
            try output.printJSON(Document(checks: checks, errors: failed.count, warnings: warnings))
        } else {
            for check in checks { output.line(Self.text(check)) }
            output.line()
            output.line("\(Self.count(failed.count, "error")), \(Self.count(warnings, "warning"))")
        }
        // Like `config check`: the report is the answer, and a failed check is a failure (status 2).
        guard failed.isEmpty else {
            Output.log("shelf: doctor: \(Self.count(failed.count, "check")) failed: \(failed.map(\.name).joined(separator: ", "))")
            exit(2)
        }
    }

    /// `ok       ffmpeg        ffmpeg version 5.1.6 (/usr/bin/ffmpeg)`, and `→ advice` indented below it.
    static func text(_ check: DoctorCheck) -> String {
        let line =
            check.status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0) + check.name.padding(toLength: 14, withPad: " ", startingAt: 0)
            + check.detail
        return check.advice.isEmpty ? line : line + "\n" + String(repeating: " ", count: 9) + "→ " + check.advice
    }

    /// "1 error", "2 warnings".
    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}
