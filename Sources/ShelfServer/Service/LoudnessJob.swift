import Foundation
import Shelf
import ShelfCore

/// The server's background loudness measurement (`loudness = true`): tracks without ReplayGain
/// are measured album by album, one decode at a time under `nice`, after each import or watched
/// change and at least hourly, so requests keep the machine's attention.
public final class LoudnessJob: Sendable {
    private let library: Library
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable () -> Void
    private let wake: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let task = Locked<Task<Void, Never>?>(nil)

    /// A job over `library`; `changed` runs after each run that stored anything.
    public init(library: Library, log: @escaping @Sendable (String) -> Void, changed: @escaping @Sendable () -> Void) {
        self.library = library
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
        defer { hourly.cancel() }
        // Tracks with no gain to give (silent, shorter than a 400 ms block) or that ffmpeg cannot
        // decode stay without ReplayGain: they are not measured again while the server runs.
        var skip = Set<TrackID>()
        while await iterator.next() != nil, !Task.isCancelled {
            do {
                var options = LoudnessOptions(niceness: 10)
                options.skip = skip
                let report = try await library.measureLoudness(options)
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
        }
    }
}
