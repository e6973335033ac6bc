import Foundation
import Shelf
import ShelfCore

/// Scans of the music folders (`shelf serve --music`, the config's `music`): on a schedule
/// (`scan-interval`: at start, then that long after each scan ends) and on demand (Subsonic
/// startScan). Every scan is an import through `ImportJobs`, so there is one at a time whoever
/// starts it, and its progress reaches the events stream like any import's. The folders and the
/// interval can change while the server runs (SIGHUP).
public final class ScanScheduler: Sendable {
    private struct State {
        var roots: [URL]
        var interval: Duration?
        var loop: Task<Void, Never>?
        var stopped = false
    }

    private let imports: ImportJobs
    private let log: @Sendable (String) -> Void
    private let state: Locked<State>

    /// A scheduler importing `roots` through `imports` every `interval` (nil: only on demand).
    public init(imports: ImportJobs, roots: [URL], interval: Duration?, log: @escaping @Sendable (String) -> Void) {
        self.imports = imports
        self.log = log
        state = Locked(State(roots: roots, interval: interval))
    }

    /// The folders scans import.
    public var roots: [URL] { state.withLock { $0.roots } }

    /// The time between the end of one scheduled scan and the start of the next; nil when off.
    public var interval: Duration? { state.withLock { $0.interval } }

    /// Starts the schedule; the first scan runs now.
    public func start() { restart(scanFirst: true) }

    /// New folders or interval; the schedule starts over, its next scan one interval from now.
    public func update(roots: [URL], interval: Duration?) {
        let changed = state.withLock { state -> Bool in
            defer { (state.roots, state.interval) = (roots, interval) }
            return state.roots != roots || state.interval != interval
        }
        if changed { restart(scanFirst: false) }
    }

    /// Starts a scan of the folders now unless one (or any import) runs; returns the import's status.
    @discardableResult
    public func scanNow(reason: String) -> ImportJobs.Status? {
        let roots = self.roots
        guard !roots.isEmpty else { return nil }
        do {
            let status = try imports.start(roots, scan: true)
            log("shelf: scan (\(reason)): importing \(roots.map(\.path).joined(separator: ", "))")
            return status
        } catch {
            return imports.status  // another import runs; that one is the scan
        }
    }

    /// Ends the schedule (a running scan is stopped by `ImportJobs.stop`).
    public func stop() {
        let loop = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            defer { state.loop = nil }
            return state.loop
        }
        loop?.cancel()
    }

    private func restart(scanFirst: Bool) {
        let old = state.withLock { state -> Task<Void, Never>? in
            let old = state.loop
            guard !state.stopped, let interval = state.interval else {
                state.loop = nil
                return old
            }
            state.loop = Task { [weak self] in
                var first = scanFirst
                while !Task.isCancelled {
                    if !first {
                        do { try await Task.sleep(for: interval) } catch { return }
                        // Stopped while asleep: no scan may start once the server is stopping.
                        guard !Task.isCancelled else { return }
                    }
                    first = false
                    guard let self else { return }
                    // When something else is importing, that import stands for this scan.
                    if self.imports.status.state != "running" { self.scanNow(reason: "scheduled") }
                    // The next scan counts from the end of this one, so slow scans never pile up.
                    await self.imports.waitForCurrent()
                }
            }
            return old
        }
        old?.cancel()
    }
}
