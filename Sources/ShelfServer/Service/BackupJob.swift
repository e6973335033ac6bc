import Foundation
import Shelf
import ShelfCore

/// Where and how often the server backs the library up (`backup-dir`, `backup-keep`, `backup-every`).
public struct BackupSettings: Sendable, Equatable {
    /// The folder backups go into; nil: no scheduled backups, and none on request either.
    public var directory: URL?
    /// How many backups the folder keeps: the newest, by the time in their names.
    public var keep = 7
    /// The time from the end of one scheduled backup to the start of the next.
    public var every: Duration = .seconds(86_400)
    /// How long after start an overdue first backup waits (at most `every`), so that a server
    /// restarted in a loop does not copy the library on each start.
    public var overdueDelay: Duration = .seconds(60)

    /// Settings for `directory` (nil: off), with the defaults.
    public init(directory: URL? = nil) { self.directory = directory }
}

/// The server's backups as the admin page sees them: the schedule (when `backup-dir` is set) and
/// the backups an admin asks for, one at a time either way, each followed by the rotation that
/// keeps the newest `keep`. A failed backup is logged and kept as `lastError`; the schedule goes on.
public final class BackupControl: Sendable {
    /// What `GET /api/backups` says about the job, beside the list of files.
    public struct Status: Sendable {
        /// The backup folder; nil when `backup-dir` is not set.
        public var directory: String?
        /// How many backups are kept.
        public var keep: Int
        /// The seconds between scheduled backups.
        public var every: Int
        /// When the last backup of this server's life ended (taken or failed); nil before the first.
        public var lastRun: Date?
        /// Why the last backup failed (or its rotation); nil when it went well.
        public var lastError: String?
        /// A backup is being taken now.
        public var running: Bool
    }

    private struct State {
        var lastRun: Date?
        var lastError: String?
        var running = false
        var stopped = false
        var loop: Task<Void, Never>?
        /// The copy under way, scheduled or asked for.
        var copy: Task<BackupReport, any Error>?
    }

    /// The folder, rotation and interval, fixed for the server's life (a change needs a restart).
    public let settings: BackupSettings
    private let library: Library
    private let log: @Sendable (String) -> Void
    private let state = Locked(State())

    /// Backups of `library` as `settings` say; nothing runs before `start()`.
    public init(library: Library, settings: BackupSettings, log: @escaping @Sendable (String) -> Void) {
        self.library = library
        self.settings = settings
        self.log = log
    }

    /// Starts the schedule when there is a folder: the folder is made (mode 0700) if it is missing,
    /// and the first backup is due one interval after the newest one already there.
    public func start() {
        guard let directory = settings.directory else { return }
        state.withLock { state in
            guard !state.stopped, state.loop == nil else { return }
            state.loop = Task { [self] in await schedule(directory) }
        }
    }

    /// Ends the schedule; a backup being copied (scheduled or asked for) stops at its next step
    /// and leaves no file.
    public func stop() async {
        let (loop, copy) = state.withLock { state -> (Task<Void, Never>?, Task<BackupReport, any Error>?) in
            state.stopped = true
            defer { state.loop = nil }
            return (state.loop, state.copy)
        }
        loop?.cancel()
        copy?.cancel()
        await loop?.value
        _ = try? await copy?.value
    }

    /// The job's settings and how its last run went.
    public var status: Status {
        let settings = settings
        return state.withLock { state in
            Status(
                directory: settings.directory?.path, keep: settings.keep, every: Int(settings.every.components.seconds), lastRun: state.lastRun,
                lastError: state.lastError, running: state.running)
        }
    }

    /// The backups in the folder, newest first; none when there is no folder.
    public func backups() async throws -> [BackupFileInfo] {
        guard let directory = settings.directory else { return [] }
        return try await Self.offPool { try BackupFolder.list(directory) }
    }

    /// Takes a backup into the folder now, then deletes the oldest beyond `keep`. Refused (409)
    /// when there is no folder or a backup is already running. `reason` names the run in the log.
    @discardableResult
    public func backupNow(reason: String) async throws -> BackupReport {
        guard let directory = settings.directory else {
            throw HTTPError(
                status: 409, code: "noBackupDir",
                message: "no backup folder is configured: set backup-dir in shelf serve's config file (and restart the server)")
        }
        try state.withLock { state throws(HTTPError) in
            guard !state.stopped else { throw HTTPError(status: 503, code: "cancelled", message: "the server is stopping") }
            guard !state.running else {
                throw HTTPError(status: 409, code: "backupRunning", message: "a backup is already running; try again when it has finished")
            }
            state.running = true
        }
        defer { state.withLock { $0.running = false } }
        let keep = settings.keep
        let report: BackupReport
        do {
            let destination = try await Self.offPool { () throws -> URL in
                try Self.makeFolder(directory)
                return BackupFolder.newFile(in: directory, for: Date())
            }
            // Its own task, which `stop()` cancels: a backup an admin asked for must stop with the
            // server too, at its next step, rather than be killed mid-copy by the process exit.
            let library = library
            let copy = Task { try await library.backup(to: destination) }
            state.withLock { $0.copy = copy }
            defer { state.withLock { $0.copy = nil } }
            report = try await withTaskCancellationHandler {
                try await copy.value
            } onCancel: {
                copy.cancel()
            }
        } catch is CancellationError {
            log("shelf: backup (\(reason)): stopped; no file was written")
            throw CancellationError()
        } catch {
            state.withLock { state in
                state.lastRun = Date()
                state.lastError = "\(error)"
            }
            log("shelf: backup (\(reason)) error: \(error)")
            throw error
        }
        state.withLock { state in
            state.lastRun = Date()
            state.lastError = nil
        }
        log("shelf: backup (\(reason)): \(report.path), \(report.bytes) bytes, \(report.trackCount) tracks")
        do {
            let taken = URL(fileURLWithPath: report.path).lastPathComponent
            let deleted = try await Self.offPool { try BackupFolder.prune(directory, keep: keep, sparing: taken) }
            if !deleted.isEmpty { log("shelf: backup: deleted \(deleted.joined(separator: ", ")) (backup-keep \(keep))") }
        } catch {
            // The new backup stands; the folder holds more than it should until a rotation succeeds.
            state.withLock { $0.lastError = "the backup was taken, but older ones could not be deleted: \(error)" }
            log("shelf: backup: rotation error: \(error)")
        }
        return report
    }

    // MARK: The schedule

    private func schedule(_ directory: URL) async {
        let every = settings.every
        let newest: Date?
        do {
            newest = try await Self.offPool { () throws -> Date? in
                try Self.makeFolder(directory)
                _ = BackupFolder.removePartialCopies(directory)  // left by a server stopped mid-copy
                return try BackupFolder.list(directory).first?.created
            }
        } catch {
            // The first run tries again (a folder on a mount that is not there yet may be by then).
            state.withLock { $0.lastError = "\(error)" }
            log("shelf: backup error: \(error)")
            newest = nil
        }
        var delay = Self.firstDelay(newest: newest, now: Date(), every: every, soon: settings.overdueDelay)
        log(
            "shelf: backup: every \(Self.spoken(every)) into \(directory.path), keeping the newest \(settings.keep); the next in \(Self.spoken(delay))"
        )
        while !Task.isCancelled {
            do { try await Task.sleep(for: delay) } catch { return }
            // Stopped while asleep: no copy may start once the server is stopping.
            guard !Task.isCancelled else { return }
            // A failure is logged and kept in the status by backupNow; a refusal means an admin's
            // backup is running, which stands for this one.
            _ = try? await backupNow(reason: "scheduled")
            // Counted from the end of this one, so a slow copy never makes them pile up.
            delay = every
        }
    }

    /// When the first scheduled backup runs: one interval after the newest backup in the folder,
    /// so restarts keep the cadence; `soon` after start when that time has passed (or there is
    /// none), so a server restarted more often than the interval still takes backups; never later
    /// than one interval after start (a backup dated in the future is a clock mistake).
    static func firstDelay(newest: Date?, now: Date, every: Duration, soon: Duration) -> Duration {
        let soon = min(soon, every)
        guard let newest else { return soon }
        let age = Duration.seconds(now.timeIntervalSince(newest))
        return min(every, max(soon, every - age))
    }

    /// The folder, made with mode 0700 when missing: the backups hold the library's secret key.
    private static func makeFolder(_ directory: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw LibraryError.backupFailed(path: directory.path, reason: "backup-dir is a file, not a folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw LibraryError.backupFailed(path: directory.path, reason: "cannot create the backup folder: \(error.localizedDescription)")
        }
    }

    /// `1d`, `6h`, `30m` or `90s`, the config's own forms.
    static func spoken(_ duration: Duration) -> String {
        let seconds = max(0, Int(duration.components.seconds))
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// Runs blocking file and SQLite work on a thread of its own, off Swift's cooperative pool.
    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
