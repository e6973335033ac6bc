import Dispatch
import Foundation
import Synchronization
import Shelf

/// Where a command writes: exactly one JSON document on stdout with `--json`, text otherwise;
/// progress and logs always on stderr.
struct Output {
    let json: Bool

    /// The encoder behind every `--json` document: camelCase keys as `Codable` writes them, keys
    /// sorted so output is stable, dates in ISO 8601.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Prints `value` as the command's one JSON document.
    func printJSON<T: Encodable>(_ value: T) throws {
        let data = try Self.encoder().encode(value)
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    /// Prints a line of text on stdout.
    func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Prints a line on stderr.
    static func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The `{"error":{"code":…,"message":…}}` document printed with `--json` when a command fails.
struct ErrorDocument: Encodable {
    struct Body: Encodable {
        let code: String
        let message: String
    }
    let error: Body
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal so that logs and
/// pipes never fill with control characters.
final class ProgressBar {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var lastDraw = Date.distantPast

    /// A bar for `total` units of work named `label`.
    init(label: String, total: Int, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.total = max(total, 1)
        self.enabled = enabled
    }

    /// Redraws at most ten times a second.
    func update(_ done: Int) {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 || done >= total else { return }
        lastDraw = Date()
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) \(bar) \(Int(fraction * 100))% (\(done)/\(total))".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        guard enabled else { return }
        update(total)
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// Runs a long job whose progress draws a bar (created at the first report, when the total is
/// known). Ctrl-C cancels the job, which stops at its next safe point; the command then fails
/// with `cancelledMessage`.
func runInterruptible<T: Sendable>(
    label: String, cancelledMessage: String,
    _ job: @escaping @Sendable (_ report: @escaping @Sendable (_ done: Int, _ total: Int) -> Void) async throws -> T
) async throws -> T {
    let bar = Mutex<ProgressBar?>(nil)
    let task = Task {
        try await job { done, total in
            bar.withLock { bar in
                if bar == nil { bar = ProgressBar(label: label, total: total) }
                bar?.update(done)
            }
        }
    }
    signal(SIGINT, SIG_IGN)
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    interrupt.setEventHandler { task.cancel() }
    interrupt.resume()
    defer { interrupt.cancel() }
    defer { bar.withLock { $0?.finish() } }
    do {
        return try await task.value
    } catch is CancellationError {
        throw CommandFailure(code: "cancelled", message: cancelledMessage)
    }
}
