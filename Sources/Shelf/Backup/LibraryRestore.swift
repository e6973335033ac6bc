import Foundation
import ShelfCore
import ShelfDatabase

/// What `Library.restore(from:force:)` did.
public struct RestoreReport: Sendable, Codable, Equatable {
    /// The library directory restored into.
    public var path: String
    /// The backup file it came from.
    public var backup: String
    /// Where the library that was there went (`--force`), nil when the directory was empty.
    public var movedAside: String?
    /// The backup's schema version, and the version after opening (older backups are migrated).
    public var schemaVersionBefore: Int
    public var schemaVersion: Int
    /// The restored store's new ID: tokens of the backed-up store keep working up to `restoredToken`.
    public var storeID: UUID
    /// The backed-up store's position: tokens up to it still work, later ones answer "expired".
    public var restoredToken: ChangeToken
    /// The library's current token after the restore.
    public var token: ChangeToken
    public var trackCount: Int
    public var playlistCount: Int
    public var userCount: Int
    /// Whether the backup carried the secret key (without it, stored passwords must be set again).
    public var restoredSecretKey: Bool
    /// When the backup was taken, as it recorded.
    public var backupCreated: String?
}

extension Library {
    /// Restores a backup made by `backup(to:)` into this library's directory, which must be empty
    /// or absent; with `force`, a directory that is not empty is first renamed aside
    /// (`DIR.before-restore-DATE`) and renamed back if the restore fails.
    ///
    /// The backup is checked (`integrity_check`, its schema, its key) before anything is touched.
    /// The store and key are written under temporary names and published last, so an interrupted
    /// restore leaves no half library. The restored store gets a new ID that remembers the old one
    /// up to the backup's position: sync clients' tokens up to it keep working; tokens from after
    /// it (changes the restore undid) answer "expired" instead of silently meaning other changes.
    /// The store is then opened, which migrates a backup from an older schema. Stop `shelf serve`
    /// on this library first: the restore replaces files under it.
    public func restore(from backup: URL, force: Bool = false) async throws -> RestoreReport {
        let directory = self.directory
        let backup = backup.standardizedFileURL
        let timeout = configuration.busyTimeoutMilliseconds
        var report = try await offPool { try Self.restoreFiles(from: backup, into: directory, force: force, busyTimeout: timeout) }
        if report.schemaVersionBefore == 1 {
            return report  // a legacy store opens only through `migrateLegacyStore`
        }
        try await open()
        let info = try await info()
        report.schemaVersion = info.schemaVersion
        report.token = try await currentToken()
        return report
    }

    /// The backup's facts, from its `shelf_backup` table.
    private struct BackupContents {
        var key: Data?
        var created: String?
        var storeID: UUID
        var token: ChangeToken
        var schemaVersion: Int
    }

    private static func restoreFiles(from backup: URL, into directory: URL, force: Bool, busyTimeout: Int) throws -> RestoreReport {
        let contents = try inspectBackup(backup, busyTimeout: busyTimeout)
        let fm = FileManager.default
        var movedAside: URL?
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw LibraryError.restoreFailed(path: backup.path, reason: "\(directory.path) is a file, not a library directory")
            }
            let entries = (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
            if !entries.isEmpty {
                guard force else {
                    throw LibraryError.restoreFailed(
                        path: backup.path,
                        reason: "the library directory \(directory.path) is not empty; restore into an empty one, or add --force to move it aside first")
                }
                let aside = try asideName(for: directory)
                guard rename(directory.path, aside.path) == 0 else {
                    throw LibraryError.restoreFailed(path: backup.path, reason: "cannot move \(directory.path) aside: \(String(cString: strerror(errno)))")
                }
                movedAside = aside
            }
        }
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            try placeStore(from: backup, contents: contents, into: directory, busyTimeout: busyTimeout)
        } catch {
            // Leave things as they were: our files go, and the moved-aside library comes back.
            for name in ["library.sqlite", "library.sqlite-wal", "library.sqlite-shm", SecretKey.fileName] {
                unlink(directory.appendingPathComponent(name).path)
            }
            if let movedAside {
                rmdir(directory.path)
                rename(movedAside.path, directory.path)
            }
            if let error = error as? LibraryError { throw error }
            throw LibraryError.restoreFailed(path: backup.path, reason: BackupFile.describe(error))
        }
        let db = try Connection(path: directory.appendingPathComponent("library.sqlite").path, mode: .readOnly)
        let storeID = try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'").flatMap(UUID.init(uuidString:)) ?? contents.storeID
        return RestoreReport(
            path: directory.path, backup: backup.path, movedAside: movedAside?.path, schemaVersionBefore: contents.schemaVersion,
            schemaVersion: contents.schemaVersion, storeID: storeID, restoredToken: contents.token,
            token: ChangeToken(storeID: storeID, transaction: contents.token.transaction),
            trackCount: try db.scalar(Int.self, "SELECT count(*) FROM track") ?? 0,
            playlistCount: try db.scalar(Int.self, "SELECT count(*) FROM playlist") ?? 0,
            userCount: try userCount(db), restoredSecretKey: contents.key != nil, backupCreated: contents.created)
    }

    /// Checks a backup before anything is touched: a SQLite file that passes `integrity_check`,
    /// carries Shelf's backup table, and holds a schema this build reads.
    private static func inspectBackup(_ backup: URL, busyTimeout: Int) throws -> BackupContents {
        guard FileManager.default.isReadableFile(atPath: backup.path) else {
            throw LibraryError.restoreFailed(path: backup.path, reason: "the file does not exist or cannot be read")
        }
        do {
            let db = try Connection(path: backup.path, mode: .readOnly, busyTimeoutMilliseconds: Int32(busyTimeout))
            let hasTable = try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'shelf_backup'") ?? 0 > 0
            guard hasTable else {
                throw LibraryError.restoreFailed(path: backup.path, reason: "it is not a Shelf backup (made by `shelf backup`)")
            }
            let problems = try db.integrityCheck()
            guard problems.isEmpty else {
                throw LibraryError.restoreFailed(path: backup.path, reason: "it is damaged: \(problems.prefix(3).joined(separator: "; "))")
            }
            let version = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
            if version > Schema.currentVersion {
                throw LibraryError.newerSchema(path: backup.path, found: version, supported: Schema.currentVersion)
            }
            guard let storeID = try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'").flatMap(UUID.init(uuidString:)) else {
                throw LibraryError.restoreFailed(path: backup.path, reason: "its store ID is missing")
            }
            let key = try db.queryOne("SELECT value FROM shelf_backup WHERE name = 'secret_key'") { try $0.get(0) as Data }
            let created = try db.queryOne("SELECT value FROM shelf_backup WHERE name = 'created'") { try $0.string(0) }
            let current = try HistoryBounds.read(db).current
            return BackupContents(
                key: key, created: created, storeID: storeID, token: ChangeToken(storeID: storeID, transaction: current), schemaVersion: version)
        } catch let error as LibraryError {
            throw error
        } catch let error as SQLiteError where error.code == .notADatabase || error.code == .corrupt {
            throw LibraryError.restoreFailed(path: backup.path, reason: "it is not a readable SQLite file (\(error.message))")
        } catch {
            throw LibraryError.restoreFailed(path: backup.path, reason: BackupFile.describe(error))
        }
    }

    /// Copies the backup beside `library.sqlite`, turns it back into a store (the backup table
    /// dropped, a new store ID that remembers the old one, WAL), installs the key, and publishes
    /// the store under its name last.
    private static func placeStore(from backup: URL, contents: BackupContents, into directory: URL, busyTimeout: Int) throws {
        let store = directory.appendingPathComponent("library.sqlite")
        let temporary = try BackupFile.createPrivate(beside: store)
        var published = false
        defer { if !published { BackupFile.remove(temporary) } }
        try copyFile(backup, to: temporary)
        do {
            let db = try Connection(path: temporary.path, mode: .readWrite(create: false), busyTimeoutMilliseconds: Int32(busyTimeout))
            try db.transaction(.immediate) {
                try db.execute(script: "DROP TABLE shelf_backup")
                let earlier = try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'restored_stores'") ?? ""
                let entry = "\(contents.storeID.uuidString):\(contents.token.transaction)"
                try db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('restored_stores', ?)", [earlier.isEmpty ? entry : earlier + "," + entry])
                try db.execute("UPDATE meta SET value = ? WHERE key = 'store_id'", [UUID().uuidString])
            }
            _ = try db.pragma("journal_mode = WAL")
            try db.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        unlink(temporary.path + "-wal")
        unlink(temporary.path + "-shm")
        if let key = contents.key { try SecretKey.install(key, directory: directory) }
        try BackupFile.publish(temporary, as: store)
        published = true
    }

    /// A byte copy of a file that no one writes (the backup), flushed before it is used.
    private static func copyFile(_ source: URL, to destination: URL) throws {
        guard let input = FileHandle(forReadingAtPath: source.path), let output = FileHandle(forWritingAtPath: destination.path) else {
            throw LibraryError.restoreFailed(path: source.path, reason: "cannot copy it to \(destination.path)")
        }
        defer {
            try? input.close()
            try? output.close()
        }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
        try output.synchronize()
    }

    /// `DIR.before-restore-YYYYMMDD-HHMMSS`, with a counter when that name is taken.
    private static func asideName(for directory: URL) throws -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let base = directory.path + ".before-restore-" + formatter.string(from: Date())
        var candidate = base
        var counter = 1
        while FileManager.default.fileExists(atPath: candidate) {
            counter += 1
            candidate = base + "-\(counter)"
        }
        return URL(fileURLWithPath: candidate)
    }
}
