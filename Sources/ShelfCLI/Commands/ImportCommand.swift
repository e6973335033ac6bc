import Foundation
import Shelf
import ShelfCore

/// `shelf import PATH…`: reads audio files into the library with a progress bar; Ctrl-C stops
/// between chunks (what is committed stays; running it again carries on).
struct ImportCommand: Command {
    static let name = "import"
    static let abstract = "Import audio files (tags, sort tags, lyrics, pictures); unchanged files are skipped, moves and duplicates recognised by audio."
    static let synopsis = "PATH... [--chunk N] [--duplicates] [--json]"

    let paths: [URL]
    let options: ImportOptions

    init(arguments: inout Arguments) throws {
        var options = ImportOptions()
        options.chunkSize = try arguments.intOption("--chunk", in: 1...100_000) ?? options.chunkSize
        options.importDuplicates = arguments.flag("--duplicates")
        let words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("import expects at least one file or directory") }
        paths = words.map { URL(fileURLWithPath: $0) }
        self.options = options
    }

    func run(library: Library, output: Output) async throws {
        let report = try await runInterruptible(
            label: "importing", cancelledMessage: "import stopped between chunks; what was imported stays, run it again to carry on"
        ) { [paths, options] report in
            try await library.importFiles(at: paths, options: options) { progress in report(progress.done, progress.total) }
        }
        do {
            try await completeMirror(library)
        } catch {
            // The import itself is done and reported; only the mirror waits for its next build.
            let reason = (error as? CommandFailure)?.message ?? "the read mirror could not be built (\(error)); `shelf mirror build` tries again"
            Output.log("shelf: \(reason)")
        }
        if output.json { return try output.printJSON(report) }
        output.line("added \(report.added), updated \(report.updated), unchanged \(report.unchanged), moved \(report.moved) in \(String(format: "%.1f", report.seconds)) s")
        for duplicate in report.duplicates { output.line("duplicate: \(duplicate.path) (same audio as \(duplicate.existing))") }
        for failure in report.failed { output.line("failed: \(failure.error)") }
    }
}

/// `shelf scan [--prune]`: the tracks whose files are gone; with --prune they are removed.
struct ScanCommand: Command {
    static let name = "scan"
    static let abstract = "Report tracks whose files are gone; --prune removes them (all in one transaction)."
    static let synopsis = "[--prune] [--json]"

    let prune: Bool

    init(arguments: inout Arguments) throws {
        prune = arguments.flag("--prune")
        guard try arguments.positionals().isEmpty else { throw UsageError("scan takes no arguments") }
    }

    struct Missing: Encodable {
        let id: TrackID
        let path: String
    }

    struct Result: Encodable {
        let missing: [Missing]
        let pruned: Int
    }

    func run(library: Library, output: Output) async throws {
        let missing = try await library.missingFiles(remove: prune)
        let result = Result(missing: missing.map { Missing(id: $0.id, path: $0.path) }, pruned: prune ? missing.count : 0)
        if output.json { return try output.printJSON(result) }
        for item in missing { output.line("\(prune ? "removed" : "missing"): \(item.id) \(item.path)") }
        output.line("\(missing.count) track\(missing.count == 1 ? "" : "s") with no file\(prune ? ", removed" : "")")
    }
}
