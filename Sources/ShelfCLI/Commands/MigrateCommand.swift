import Foundation
import Shelf

/// `shelf migrate`: moves a legacy store's inline pictures out, chunk by chunk, with a progress
/// bar; Ctrl-C stops it between chunks (nothing is lost) and running it again resumes.
struct MigrateCommand: Command {
    static let name = "migrate"
    static let abstract = "Migrate a legacy (schema 1) store: pictures move to their own table in resumable chunks; Ctrl-C stops safely."
    static let synopsis = "[--chunk N] [--json]"

    let chunk: Int

    init(arguments: inout Arguments) throws {
        chunk = try arguments.intOption("--chunk", in: 1...100_000) ?? 200
        guard try arguments.positionals().isEmpty else { throw UsageError("migrate takes no arguments") }
    }

    func run(library: Library, output: Output) async throws {
        let chunk = chunk
        let report = try await runInterruptible(
            label: "moving pictures", cancelledMessage: "migration stopped between chunks; run `shelf migrate` again to resume"
        ) { report in
            try await library.migrateLegacyStore(chunkSize: chunk) { progress in report(progress.moved, progress.total) }
        }
        try await completeMirror(library)
        if output.json { return try output.printJSON(report) }
        if report.fromVersion == 1 {
            output.line("moved \(report.moved) pictures into \(report.pictures) artwork rows; \(report.bytesBefore) → \(report.bytesAfter) bytes")
        } else {
            output.line("nothing to migrate: the store is already version \(report.fromVersion)")
        }
    }
}

extension MigrateCommand {
    static let discussion = """
        Takes a legacy (schema 1) store, whose pictures are inline in the track rows, to the current schema: \
        pictures move to their own content-addressed table in resumable chunks, with a progress bar, then the \
        read mirror is built. Ctrl-C stops between chunks; running it again resumes.
        """
    static let flags = [FlagHelp("--chunk", "N", "Tracks moved per transaction (1 to 100000).", default: "200")]
    static let examples = ["shelf migrate", "shelf --library old-library migrate --chunk 1000 --json"]
}
