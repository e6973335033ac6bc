import Foundation
import Shelf
import ShelfCore

/// The server's background loudness measurement (`loudness = true`): tracks without ReplayGain
/// are measured album by album, one decode at a time under `nice`, after each import or watched
/// change and at least hourly, so requests keep the machine's attention.
public final class LoudnessJob: Sendable {
    /// What the admin page shows: whether a run is going and how the last one went.
    public struct Status: Codable, Sendable {
        /// A measurement is running now.
        public var running = false
        /// The last finished run, or nil before the first.
        public var last: LastRun?
    }

    /// One finished run's totals.
    public struct LastRun: Codable, Sendable {
        public var measured: Int
        public var failed: Int
        public var albums: Int
        /// Seconds of audio decoded and the wall-clock seconds it took.
        public var audioSeconds: Double
        public var seconds: Double
        public var finished: Date
    }

    private let library: Library
    private let once: Bool
    private let state = Locked(Status())
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable () -> Void
    private let wake: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let task = Locked<Task<Void, Never>?>(nil)

    /// A job over `library`; `changed` runs after each run that stored anything.
    /// With `once`, the job measures what is waiting and ends (the admin page's "measure now"
    /// while the background job is off).
    public init(library: Library, once: Bool = false, log: @escaping @Sendable (String) -> Void, changed: @escaping @Sendable () -> Void) {
        self.library = library
        self.once = once
        self.log = log
        self.changed = changed
        (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts the job; the first run is now.
    public func start() {
        wake.yield()
        let job = Task { [self] in await run() }
        task.withLock { $0 = job }
    }

    /// Asks for a run soon (new tracks came in).
    public func poke() { wake.yield() }

    /// Whether a run is going and the last run's totals.
    public var status: Status { state.withLock { $0 } }

    /// Whether the job has finished for good (a one-off run done, or stopped).
    public var isFinished: Bool { finished.withLock { $0 } }
    private let finished = Locked(false)

    /// Stops the job; a decode in hand is killed.
    public func stop() async {
        wake.finish()
        let job = task.withLock { $0 }
        job?.cancel()
        await job?.value
    }

    private func run() async {
        var iterator = signals.makeAsyncIterator()
        let library = library
        let hourly = Task {
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(3_600)) } catch { return }
                wake.yield()
            }
        }
        defer {
            hourly.cancel()
            finished.withLock { $0 = true }
        }
        // Tracks with no gain to give (silent, shorter than a 400 ms block) or that ffmpeg cannot
        // decode stay without ReplayGain: they are not measured again while the server runs.
        var skip = Set<TrackID>()
        while await iterator.next() != nil, !Task.isCancelled {
            state.withLock { $0.running = true }
            defer { state.withLock { $0.running = false } }
            do {
                var options = LoudnessOptions(niceness: 10)
                options.skip = skip
                let report = try await library.measureLoudness(options)
                state.withLock {
                    $0.last = LastRun(
                        measured: report.measured.count, failed: report.failed.count, albums: report.albums,
                        audioSeconds: report.audioSeconds, seconds: report.seconds, finished: Date())
                }
                skip.formUnion(report.measured.filter { $0.trackGain == nil }.map(\.id))
                skip.formUnion(report.failed.map(\.id))
                if !report.measured.isEmpty || !report.failed.isEmpty {
                    log(
                        "shelf: loudness: measured \(report.measured.count) tracks in \(report.albums) albums, \(report.failed.count) failed"
                            + String(format: " (%.0f s of audio in %.1f s)", report.audioSeconds, report.seconds))
                    for failure in report.failed.prefix(20) { log("shelf: loudness: \(failure.error)") }
                    changed()
                }
            } catch is CancellationError {
                return
            } catch {
                log("shelf: loudness: \(error)")
            }
            if once { return }
        }
    }
}

/// The loudness measurement as the admin page sees it: the background job while `loudness` is
/// on, and one-off runs an admin starts while it is off. One run at a time either way.
public final class LoudnessControl: Sendable {
    /// `{"enabled":…,"running":…,"last":{…}|null}` (`withoutGain` is added by the route).
    public struct Status: Codable, Sendable {
        public var enabled: Bool
        public var running: Bool
        public var last: LoudnessJob.LastRun?
    }

    private let library: Library
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable () -> Void
    /// The background job (nil: off); the server turns it on and off.
    let background = Locked<LoudnessJob?>(nil)
    private let oneOff = Locked<LoudnessJob?>(nil)

    /// Control over `library`'s measurement; `changed` runs after a run stored anything.
    public init(library: Library, log: @escaping @Sendable (String) -> Void, changed: @escaping @Sendable () -> Void) {
        self.library = library
        self.log = log
        self.changed = changed
    }

    /// Measures what is waiting now: wakes the background job, or starts a one-off run when it
    /// is off and none is running.
    public func runNow() {
        if let job = background.withLock({ $0 }) {
            job.poke()
            return
        }
        let started = oneOff.withLock { current -> LoudnessJob? in
            if let current, !current.isFinished { return nil }
            let job = LoudnessJob(library: library, once: true, log: log, changed: changed)
            current = job
            return job
        }
        started?.start()
    }

    /// The job's state, from the background job or the last one-off run.
    public var status: Status {
        let job = background.withLock { $0 }
        let single = oneOff.withLock { $0 }
        let running = (job?.status.running ?? false) || (single.map { !$0.isFinished } ?? false)
        let runs = [job?.status.last, single?.status.last].compactMap { $0 }
        return Status(enabled: job != nil, running: running, last: runs.max { $0.finished < $1.finished })
    }

    /// Stops a one-off run (the server is stopping).
    public func stopOneOff() async {
        if let job = oneOff.withLock({ $0 }) { await job.stop() }
    }
}
