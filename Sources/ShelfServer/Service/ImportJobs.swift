import Foundation
import Shelf
import ShelfCore

/// Imports started over HTTP: one at a time, in the engine's chunks, in the background; the
/// request that starts one returns at once and `status` (and the events stream, through the
/// change feed) shows how it goes.
public final class ImportJobs: Sendable {
    /// `{"state":"running"|"finished"|"failed"|"idle","done":N,"total":N,"paths":[…],"report":{…}|null,"error":…}`.
    public struct Status: Codable, Sendable {
        /// `idle`, `running`, `finished` or `failed`.
        public var state: String = "idle"
        /// Files handled so far.
        public var done = 0
        /// Files found.
        public var total = 0
        /// What is (or was last) imported.
        public var paths: [String] = []
        /// The report of the last finished import.
        public var report: ImportReport?
        /// Why the last import failed.
        public var error: String?
        /// For a scan of the music folders: each root online or offline, and the tracks found
        /// missing, come back or purged.
        public var scan: ScanReport?
    }

    private let library: Library
    private let onChange: @Sendable (Status) -> Void
    /// How long a track may stay missing before a scan removes it (nil: never).
    private let purgeMissingAfter = Locked<Duration?>(nil)
    private let current = Locked(Status())
    private let task = Locked<Task<Void, Never>?>(nil)

    /// Jobs over `library`; `onChange` runs with the status after each committed chunk and at the end.
    public init(library: Library, onChange: @escaping @Sendable (Status) -> Void) {
        self.library = library
        self.onChange = onChange
    }

    /// The current or last import.
    public var status: Status { current.withLock { $0 } }

    /// Sets how long a track may stay missing before a scan removes it (nil: never).
    public func setPurgeMissingAfter(_ duration: Duration?) { purgeMissingAfter.withLock { $0 = duration } }

    /// Starts importing `paths`; 409 while another import runs. A `scan` (of the music folders)
    /// first remembers them as roots and imports only those online, then marks what is gone from
    /// them as missing (`Library.scanMissing`), sparing offline roots.
    public func start(_ paths: [URL], scan: Bool = false) throws(HTTPError) -> Status {
        let started = current.withLock { status -> Status? in
            guard status.state != "running" else { return nil }
            status = Status(state: "running", paths: paths.map(\.path))
            return status
        }
        guard let started else { throw HTTPError(status: 409, code: "importRunning", message: "an import is already running; see GET /api/import") }
        let (library, current, onChange, purgeMissingAfter) = (library, current, onChange, purgeMissingAfter)
        onChange(started)  // before the task, so no progress report can come ahead of it
        task.withLock { task in
            task = Task {
                do {
                    var imported = paths
                    if scan {
                        try await library.rememberRoots(paths, evenIfAbsent: true)
                        let offline = try await library.judgeRoots().filter { !$0.online }.map(\.path)
                        imported = paths.filter { url in !offline.contains { Library.isPath(url.standardizedFileURL.path, under: $0) } }
                    }
                    let report = try await library.importFiles(at: imported) { progress in
                        onChange(
                            current.withLock { status in
                                status.done = progress.done
                                status.total = progress.total
                                return status
                            })
                    }
                    var scanned: ScanReport?
                    if scan {
                        let purge = purgeMissingAfter.withLock { $0 }
                        scanned = try await library.scanMissing(
                            prune: purge != nil, missingBefore: purge.map { Date().addingTimeInterval(-Double($0.components.seconds)) })
                    }
                    current.withLock {
                        $0.state = "finished"
                        $0.report = report
                        $0.scan = scanned
                        $0.done = $0.total
                    }
                } catch {
                    current.withLock {
                        $0.state = "failed"
                        $0.error = String(describing: error)
                    }
                }
                onChange(current.withLock { $0 })
            }
        }
        return started
    }

    /// Waits for the running import (if any) to end; cancelling the waiter does not stop the import.
    public func waitForCurrent() async {
        let running = task.withLock { $0 }
        await running?.value
    }

    /// Stops a running import at its next chunk and waits for it.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
