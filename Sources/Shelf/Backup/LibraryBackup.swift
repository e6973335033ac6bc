import Foundation
import ShelfCore
import ShelfDatabase

/// What `Library.backup(to:)` wrote: one self-contained file holding the store and its key.
public struct BackupReport: Sendable, Codable, Equatable {
    /// The backup file.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int64
    /// The store's schema version (`PRAGMA user_version`) in the backup.
    public var schemaVersion: Int
    /// The store's ID; a restore keeps it reachable for tokens up to `token`.
    public var storeID: UUID
    /// The change-history position the backup holds: tokens up to it still work after a restore.
    public var token: ChangeToken
    /// Tracks in the backup.
    public var trackCount: Int
    /// Playlists in the backup.
    public var playlistCount: Int
    /// Users in the backup.
    public var userCount: Int
    /// Whether the library's `secret.key` (which decrypts stored passwords) is inside.
    public var includesSecretKey: Bool
    /// When the copy was taken.
    public var created: Date
    /// The Shelf version that wrote it.
    public var shelfVersion: String
}

/// Progress of a backup, in database pages.
public struct BackupProgress: Sendable {
    /// Pages copied so far.
    public var copiedPages: Int
    /// Pages in all.
    public var totalPages: Int
}

/// The table a backup file carries beside the store's own: the secret key and facts about the
/// copy. A restore reads it and drops it, so a restored store is exactly the store that was copied.
enum BackupTable {
    static let name = "shelf_backup"
    static let create = "CREATE TABLE shelf_backup (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID"
}

extension Library {
    /// Copies the library's store and its secret key into one SQLite file at `destination`, while
    /// other connections and processes keep reading and writing.
    ///
    /// The store is copied with SQLite's online backup API from one read snapshot, so the file
    /// holds the library exactly as it was at one commit. The file is written beside its final
    /// name with mode 0600 (it holds the key), checked with `integrity_check`, flushed, and only
    /// then renamed into place: a failed or interrupted backup never leaves a file under that name.
    /// The read mirror is derived data and is not copied. Nothing in the library is written.
    public func backup(
        to destination: URL, pagesPerStep: Int = 1_024, progress: (@Sendable (BackupProgress) -> Void)? = nil
    ) async throws -> BackupReport {
        let directory = self.directory
        let storePath = location.storePath.path
        let timeout = configuration.busyTimeoutMilliseconds
        // The copy runs on its own thread; cancelling the task stops it at its next step.
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await Self.offPool {
                try Self.writeBackup(
                    storePath: storePath, directory: directory, destination: destination.standardizedFileURL,
                    pagesPerStep: pagesPerStep, busyTimeout: timeout
                ) { step in
                    progress?(step)
                    if cancelled.withLock({ $0 }) { throw CancellationError() }
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    private static func writeBackup(
        storePath: String, directory: URL, destination: URL, pagesPerStep: Int, busyTimeout: Int,
        progress: (BackupProgress) throws -> Void
    ) throws -> BackupReport {
        guard FileManager.default.fileExists(atPath: storePath) else {
            throw LibraryError.cannotOpen(path: storePath, reason: "there is no library here to back up")
        }
        try BackupFile.checkDestination(destination, library: directory)
        let key = try SecretKey.loadIfPresent(directory: directory)
        let source: Connection
        do {
            source = try Connection(path: storePath, mode: .readOnly, busyTimeoutMilliseconds: Int32(busyTimeout))
            let version = try source.scalar(Int.self, "PRAGMA user_version") ?? 0
            if version > Schema.currentVersion {
                throw LibraryError.newerSchema(path: storePath, found: version, supported: Schema.currentVersion)
            }
            guard version > 0, try source.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'") != nil else {
                throw LibraryError.notALibrary(path: storePath, reason: "it has no Shelf schema")
            }
        } catch {
            throw LibraryError.wrap(error, path: storePath, busyTimeoutMilliseconds: busyTimeout)
        }

        let temporary = try BackupFile.createPrivate(beside: destination)
        var published = false
        defer { if !published { BackupFile.remove(temporary) } }
        let report: BackupReport
        do {
            let target = try Connection(path: temporary.path, mode: .readWrite(create: false), busyTimeoutMilliseconds: Int32(busyTimeout))
            try source.backup(into: target, pagesPerStep: Int32(clamping: pagesPerStep)) { copied, total in
                try progress(BackupProgress(copiedPages: copied, totalPages: total))
            }
            // One file, no WAL beside it: the copy is read and moved as a single file.
            _ = try target.pragma("journal_mode = DELETE")
            try target.execute(script: "PRAGMA synchronous = FULL")
            let storeID = try target.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'").flatMap(UUID.init(uuidString:))
            guard let storeID else { throw LibraryError.notALibrary(path: storePath, reason: "its store ID is missing") }
            let created = Date()
            try target.transaction(.immediate) {
                try target.execute(script: BackupTable.create)
                let facts: [(String, (any SQLiteBindable)?)] = [
                    ("format", "shelf-backup-1"), ("created", ISO8601DateFormatter().string(from: created)),
                    ("shelf_version", EngineVersions.version), ("source", directory.path),
                ]
                for (name, value) in facts { try target.execute("INSERT INTO shelf_backup (name, value) VALUES (?, ?)", [name, value]) }
                if let key { try target.execute("INSERT INTO shelf_backup (name, value) VALUES ('secret_key', ?)", [key.bytes]) }
            }
            let problems = try target.integrityCheck()
            guard problems.isEmpty else {
                throw LibraryError.backupFailed(
                    path: destination.path, reason: "the copy failed its integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
            report = BackupReport(
                path: destination.path, bytes: 0, schemaVersion: try target.scalar(Int.self, "PRAGMA user_version") ?? 0, storeID: storeID,
                token: ChangeToken(storeID: storeID, transaction: try HistoryBounds.read(target).current),
                trackCount: try target.scalar(Int.self, "SELECT count(*) FROM track") ?? 0,
                playlistCount: try target.scalar(Int.self, "SELECT count(*) FROM playlist") ?? 0,
                userCount: try Self.userCount(target), includesSecretKey: key != nil, created: created,
                shelfVersion: EngineVersions.version)
        } catch let error as LibraryError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw LibraryError.backupFailed(path: destination.path, reason: BackupFile.describe(error))
        }
        try BackupFile.publish(temporary, as: destination)
        published = true
        var final = report
        final.bytes = BackupFile.size(destination)
        return final
    }

    /// Users in a store of any schema (there is no user table before version 3).
    static func userCount(_ db: Connection) throws -> Int {
        guard try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'user'") ?? 0 > 0 else { return 0 }
        return try db.scalar(Int.self, "SELECT count(*) FROM user") ?? 0
    }
}

/// File steps shared by backups and restores: private temporary files, atomic publishing, and
/// error text that names the cause.
enum BackupFile {
    /// An empty file with mode 0600 next to `destination`, for SQLite to write the copy into; the
    /// mode is set at creation so the key is never readable by others, not even for a moment.
    static func createPrivate(beside destination: URL) throws -> URL {
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LibraryError.backupFailed(path: destination.path, reason: "the folder \(folder.path) does not exist")
        }
        let temporary = folder.appendingPathComponent(".\(destination.lastPathComponent).partial-\(Secrets.randomID(8))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LibraryError.backupFailed(path: destination.path, reason: "cannot create a file in \(folder.path): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, 0o600)  // the umask may have taken bits away, never added: this is only for clarity
        close(fd)
        return temporary
    }

    /// Refuses a destination that is a folder, or one of the library's own files: renamed over
    /// the live store (beside its WAL) the copy would corrupt the library it copies.
    static func checkDestination(_ destination: URL, library: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw LibraryError.backupFailed(path: destination.path, reason: "it is a folder; name the backup file, e.g. \(destination.path)/shelf.shelfbackup")
        }
        let folder = destination.deletingLastPathComponent().resolvingSymlinksInPath().path
        let own = ["library.sqlite", "library.sqlite-wal", "library.sqlite-shm", "mirror.sqlite", "mirror.sqlite-wal", "mirror.sqlite-shm", "secret.key"]
        if folder == library.resolvingSymlinksInPath().path, own.contains(destination.lastPathComponent) {
            throw LibraryError.backupFailed(path: destination.path, reason: "it is one of the library's own files; write the backup somewhere else")
        }
    }

    /// Flushes `temporary` and renames it to `destination` (replacing an older file of that name),
    /// then flushes the folder so that the new name survives a power cut.
    static func publish(_ temporary: URL, as destination: URL) throws {
        try flush(temporary, naming: destination)
        guard rename(temporary.path, destination.path) == 0 else {
            throw LibraryError.backupFailed(path: destination.path, reason: "cannot move the finished copy into place: \(String(cString: strerror(errno)))")
        }
        syncFolder(destination.deletingLastPathComponent())
    }

    /// Like `publish`, for a restore: the name must be free (link(2) fails on an existing file),
    /// so a restore can never replace a store that is there.
    static func publishNew(_ temporary: URL, as destination: URL) throws {
        try flush(temporary, naming: destination)
        guard link(temporary.path, destination.path) == 0 else {
            throw LibraryError.restoreFailed(path: destination.path, reason: "cannot put the store in place: \(String(cString: strerror(errno)))")
        }
        unlink(temporary.path)
        syncFolder(destination.deletingLastPathComponent())
    }

    /// fsync(2) of a finished copy before it gets its name: a copy that cannot be flushed is not published.
    private static func flush(_ file: URL, naming destination: URL) throws {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LibraryError.backupFailed(path: destination.path, reason: String(cString: strerror(errno))) }
        let synced = fsync(fd) == 0
        let failure = errno
        close(fd)
        guard synced else { throw LibraryError.backupFailed(path: destination.path, reason: String(cString: strerror(failure))) }
    }

    /// fsync(2) of a folder, so that a rename in it is durable.
    static func syncFolder(_ folder: URL) {
        let dir = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { return }
        fsync(dir)
        close(dir)
    }

    /// Removes a temporary file and the journal SQLite may have left beside it.
    static func remove(_ url: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(url.path + suffix) }
    }

    static func size(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// A short reason for a failed copy: "no space left on the device" for a full disk, SQLite's
    /// own message otherwise.
    static func describe(_ error: any Error) -> String {
        if let sqlite = error as? SQLiteError {
            if sqlite.code == .full || sqlite.systemErrno == ENOSPC { return "no space left on the device" }
            return sqlite.message
        }
        return String(describing: error)
    }
}
