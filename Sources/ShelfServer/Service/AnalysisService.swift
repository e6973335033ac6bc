import Foundation
import Shelf
import ShelfCore

/// The server's sonic analysis (`analysis = true`, `shelf serve --analysis`): after each import or
/// watched change and at least hourly, the tracks without current features are analysed in the
/// background by niced worker processes; an admin can start a run at any time (`POST
/// /api/analysis`), also while the background job is off. One run at a time.
public final class AnalysisService: Sendable {
    /// `GET /api/analysis`: `{"enabled","running","done","pending","failed","rate","workers","last"}`;
    /// `rate` is audio seconds analysed per wall-clock second in the current (or last) run.
    public struct Status: Codable, Sendable {
        public var enabled: Bool
        public var running: Bool
        public var done: Int
        public var pending: Int
        public var failed: Int
        public var rate: Double?
        public var workers: Int
        /// This run's progress: files analysed of those it found waiting.
        public var progress: Progress?
        public var last: LastRun?
    }

    /// Files done of the run's total.
    public struct Progress: Codable, Sendable {
        public var done: Int
        public var total: Int
    }

    /// One finished run's totals.
    public struct LastRun: Codable, Sendable {
        public var analyzed: Int
        public var failed: Int
        public var audioSeconds: Double
        public var seconds: Double
        public var finished: Date
    }

    private struct State {
        var running = false
        var progress: Progress?
        var started: Date?
        var last: LastRun?
        var task: Task<Void, Never>?
    }

    private let library: Library
    private let enabled: Bool
    private let workers: Int
    private let command: [String]
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable () -> Void
    private let state = Locked(State())
    private let wake: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let background = Locked<Task<Void, Never>?>(nil)
    private let countsCache = Locked<(Date, AnalysisCounts)?>(nil)

    /// The service over `library`; `enabled` runs it in the background, with `workers` worker
    /// processes started by `command` (the `shelf` executable and `analyze-worker`).
    public init(
        library: Library, enabled: Bool, workers: Int, command: [String], log: @escaping @Sendable (String) -> Void,
        changed: @escaping @Sendable () -> Void
    ) {
        self.library = library
        self.enabled = enabled
        self.workers = max(1, workers)
        self.command = command
        self.log = log
        self.changed = changed
        (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The worker command of the running `shelf` executable: `/proc/self/exe` itself, which
    /// still starts this binary after a package upgrade replaced the file on disk.
    public static var defaultCommand: [String] { ["/proc/self/exe", "analyze-worker"] }

    /// Starts the background job when enabled; its first run is now.
    public func start() {
        guard enabled else { return }
        log("shelf: analysis: listening to tracks without sonic features in the background (\(workers) worker\(workers == 1 ? "" : "s"), niced)")
        wake.yield()
        let signals = signals
        let job = Task { [self] in
            let hourly = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: .seconds(3_600)) } catch { return }
                    wake.yield()
                }
            }
            defer { hourly.cancel() }
            for await _ in signals {
                if Task.isCancelled { return }
                await runOnce()
            }
        }
        background.withLock { $0 = job }
    }

    /// Asks for a run soon (new tracks came in); nothing while the background job is off.
    public func poke() { if enabled { wake.yield() } }

    /// Starts a run now unless one is going (the admin page's "analyse now").
    public func runNow() {
        if enabled {
            wake.yield()
            return
        }
        let starting = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            return true
        }
        guard starting else { return }
        // Kept for `stop()`; a task that has finished by then is harmless to cancel.
        let task = Task { [self] in await runOnce(alreadyMarked: true) }
        state.withLock { $0.task = task }
    }

    private func runOnce(alreadyMarked: Bool = false) async {
        if !alreadyMarked { state.withLock { $0.running = true } }
        state.withLock {
            $0.started = Date()
            $0.progress = Progress(done: 0, total: 0)
        }
        defer {
            state.withLock {
                $0.running = false
                $0.progress = nil
            }
        }
        do {
            let options = AnalysisOptions(workerCommand: command, workers: workers, niceness: 10)
            let report = try await library.analyze(options) { [state] done, total in
                state.withLock { $0.progress = Progress(done: done, total: total) }
            }
            countsCache.withLock { $0 = nil }
            state.withLock {
                $0.last = LastRun(
                    analyzed: report.analyzed, failed: report.failed.count, audioSeconds: report.audioSeconds, seconds: report.seconds, finished: Date())
            }
            if report.analyzed > 0 {
                log(
                    "shelf: analysis: analysed \(report.analyzed) tracks, \(report.failed.count) without features"
                        + String(format: " (%.0f s of audio in %.1f s)", report.audioSeconds, report.seconds))
                for failure in report.failed.prefix(20) { log("shelf: analysis: \(failure.status.rawValue): \(failure.path): \(failure.reason)") }
                changed()
            }
        } catch is CancellationError {
        } catch {
            log("shelf: analysis: \(error)")
        }
    }

    /// The job's state and the library's counts. The counts join every track to its result (half
    /// a second at 500,000 tracks), so a page polling during a run is answered from a count at
    /// most five seconds old.
    public func status() async throws -> Status {
        let counts: AnalysisCounts
        if let (at, cached) = countsCache.withLock({ $0 }), Date().timeIntervalSince(at) < 5 {
            counts = cached
        } else {
            counts = try await library.analysisCounts()
            countsCache.withLock { $0 = (Date(), counts) }
        }
        let s = state.withLock { ($0.running, $0.progress, $0.started, $0.last) }
        var rate: Double?
        if let last = s.3, last.seconds > 0 { rate = last.audioSeconds / last.seconds }
        return Status(
            enabled: enabled, running: s.0, done: counts.done, pending: counts.pending, failed: counts.failed, rate: rate, workers: workers,
            progress: s.1, last: s.3)
    }

    /// Stops the background job and any run (the workers are interrupted; what they had is not
    /// recorded, and the next run does it).
    public func stop() async {
        wake.finish()
        let job = background.withLock { $0 }
        let single = state.withLock { $0.task }
        job?.cancel()
        single?.cancel()
        await job?.value
        await single?.value
    }
}
