import Dispatch
import Foundation
import Shelf
import Synchronization

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
        let bar = Mutex<ProgressBar?>(nil)
        let chunk = chunk
        let task = Task {
            try await library.migrateLegacyStore(chunkSize: chunk) { progress in
                bar.withLock { bar in
                    if bar == nil { bar = ProgressBar(label: "moving pictures", total: progress.total) }
                    bar?.update(progress.moved)
                }
            }
        }
        // Ctrl-C cancels the task; the migration notices between chunks and stops cleanly.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { task.cancel() }
        interrupt.resume()
        defer { interrupt.cancel() }
        let report: MigrationReport
        do {
            report = try await task.value
        } catch is CancellationError {
            bar.withLock { $0?.finish() }
            throw CommandFailure(code: "cancelled", message: "migration stopped between chunks; run `shelf migrate` again to resume")
        }
        bar.withLock { $0?.finish() }
        if output.json { return try output.printJSON(report) }
        if report.fromVersion == 1 {
            output.line("moved \(report.moved) pictures into \(report.pictures) artwork rows; \(report.bytesBefore) → \(report.bytesAfter) bytes")
        } else {
            output.line("nothing to migrate: the store is already version \(report.fromVersion)")
        }
    }
}
