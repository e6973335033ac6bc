import Dispatch
import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Where a command writes: exactly one JSON document on stdout with `--json`, text otherwise;
/// progress and logs always on stderr.
struct Output {
    let json: Bool

    /// The encoder behind every `--json` document, shared with the server's `/api/` (ShelfWire).
    static func encoder() -> JSONEncoder { Wire.encoder() }

    /// Prints `value` as the command's one JSON document.
    func printJSON<T: Encodable>(_ value: T) throws {
        let data = try Wire.encode(value)  // the fast writers where a document has one
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    /// Prints a line of text on stdout (`terminator` "" for text that ends its own lines).
    func line(_ text: String = "", terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Prints a line on stderr.
    static func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal so that logs and
/// pipes never fill with control characters. With `SHELF_PROGRESS=lines` every report is one
/// plain line instead (`progress LABEL DONE/TOTAL`), for scripts and for tests that act at a
/// point they know the work has reached.
final class ProgressBar {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private let lines: Bool
    private var lastDraw = Date.distantPast
    private let started = Date()

    /// Whether this process reports progress as plain lines.
    static let linesRequested = ProcessInfo.processInfo.environment["SHELF_PROGRESS"] == "lines"
    /// With lines, `SHELF_PROGRESS_STOP_AT=LABEL` or `LABEL@DONE`: the process stops itself (SIGSTOP)
    /// once, after the first report of LABEL with at least DONE done.
    static let stopAt: (label: String, done: Int)? = {
        guard linesRequested, let text = ProcessInfo.processInfo.environment["SHELF_PROGRESS_STOP_AT"] else { return nil }
        guard let at = text.lastIndex(of: "@"), let done = Int(text[text.index(after: at)...]) else { return (text, 0) }
        return (String(text[..<at]), done)
    }()
    private static let stopped = Locked(false)

    /// A bar for `total` units of work named `label`.
    init(label: String, total: Int, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.total = max(total, 1)
        self.lines = Self.linesRequested
        self.enabled = enabled && !lines
    }

    /// Redraws at most ten times a second (every time, as a line, in lines mode).
    func update(_ done: Int) {
        if lines {
            FileHandle.standardError.write(Data("progress \(label) \(done)/\(total)\n".utf8))
            // For crash tests: the process halts right after the named report, so a kill sent on
            // reading it lands exactly there, not at whatever point a fast machine got to.
            if let stop = Self.stopAt, stop.label == label, done >= stop.done,
                Self.stopped.withLock({ stopped in
                    defer { stopped = true }
                    return !stopped
                })
            {
                raise(SIGSTOP)
            }
            return
        }
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 || done >= total else { return }
        lastDraw = Date()
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        // The rate so far and the time left at that rate, once there is a rate to speak of.
        let elapsed = Date().timeIntervalSince(started)
        var pace = ""
        if done > 0, elapsed >= 1, done < total {
            let rate = Double(done) / elapsed
            let left = Int((Double(total - done) / rate).rounded())
            let clock =
                left >= 3_600 ? String(format: "%d:%02d:%02d", left / 3_600, left / 60 % 60, left % 60) : String(format: "%d:%02d", left / 60, left % 60)
            pace = " " + String(format: "%.1f/s", rate) + ", \(clock) left"
        }
        FileHandle.standardError.write(Data("\r\(label) \(bar) \(Int(fraction * 100))% (\(done)/\(total))\(pace)\u{1B}[K".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        guard enabled else { return }
        update(total)
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// Runs `job` as a task that Ctrl-C cancels (it stops at its next safe point); the command then
/// fails with `cancelledMessage`.
func withInterrupt<T: Sendable>(cancelledMessage: String, _ job: @escaping @Sendable () async throws -> T) async throws -> T {
    let task = Task { try await job() }
    signal(SIGINT, SIG_IGN)
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    interrupt.setEventHandler { task.cancel() }
    interrupt.resume()
    defer {
        interrupt.cancel()
        signal(SIGINT, SIG_DFL)
    }
    do {
        return try await task.value
    } catch is CancellationError {
        throw CommandFailure(code: "cancelled", message: cancelledMessage)
    }
}

/// Runs a long job whose progress draws a bar (created at the first report, when the total is
/// known). Ctrl-C cancels the job, which stops at its next safe point; the command then fails
/// with `cancelledMessage`.
func runInterruptible<T: Sendable>(
    label: String, cancelledMessage: String,
    _ job: @escaping @Sendable (_ report: @escaping @Sendable (_ done: Int, _ total: Int) -> Void) async throws -> T
) async throws -> T {
    let bar = Locked<ProgressBar?>(nil)
    defer { bar.withLock { $0?.finish() } }
    return try await withInterrupt(cancelledMessage: cancelledMessage) {
        try await job { done, total in
            bar.withLock { bar in
                if bar == nil { bar = ProgressBar(label: label, total: total) }
                bar?.update(done)
            }
        }
    }
}

/// The mirror build as a command's own phase: a bar per build phase, Ctrl-C stopping it at its
/// next step (every finished step stays on disk, and the next build resumes from it).
/// Returns the mirror's status afterwards; a disabled mirror is left alone unless `enable`.
@discardableResult
func completeMirror(_ library: Library, enable: Bool = false, fresh: Bool = false) async throws -> MirrorStatus {
    if !enable, !fresh, try await library.mirrorStatus().state != .building { return try await library.mirrorStatus() }
    let display = Locked<(phase: MirrorBuildPhase?, bar: ProgressBar?)>((nil, nil))
    defer { display.withLock { $0.bar?.finish() } }
    return try await withInterrupt(
        cancelledMessage: "mirror build stopped; what it built stays on disk and `shelf mirror build` resumes it"
    ) {
        try await library.completeMirror(fresh: fresh) { progress in
            display.withLock { display in
                if display.phase != progress.phase {
                    display.bar?.finish()
                    display = (progress.phase, ProgressBar(label: "mirror:\(progress.phase.rawValue)", total: progress.total))
                }
                display.bar?.update(progress.done)
            }
        }
    }
}

/// The one line a read command prints on stderr when the mirror cannot answer yet, so that a
/// slow answer from the direct path is never silent.
func noteMirrorNotReady(_ library: Library) async {
    guard let status = try? await library.mirrorStatus(), status.state == .building else { return }
    let phase = status.phase.map { " (\($0.rawValue) \(status.phaseDone)/\(status.phaseTotal))" } ?? ""
    Output.log("shelf: the read mirror is not built yet\(phase); answering from the direct path, which is slower on large libraries; run `shelf mirror build`")
}
