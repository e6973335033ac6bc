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
    /// The backup's schema version.
    public var schemaVersionBefore: Int
    /// The schema after the restore (an older backup is migrated).
    public var schemaVersion: Int
    /// The restored store's new ID: tokens of the backed-up store keep working up to `restoredToken`.
    public var storeID: UUID
    /// The backed-up store's position: tokens up to it still work, later ones answer "expired".
    public var restoredToken: ChangeToken
    /// The library's current token after the restore.
    public var token: ChangeToken
    /// Tracks restored.
    public var trackCount: Int
    /// Playlists restored.
    public var playlistCount: Int
    /// Users restored (their sessions are not: everyone signs in again).
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
        var report = try await Self.offPool { try Self.restoreFiles(from: backup, into: directory, force: force, busyTimeout: timeout) }
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
        // Opened before anything moves: a backup kept inside the library directory (the shipped
        // config's backup-dir) moves aside with it, and the handle still reads the file checked.
        guard let source = FileHandle(forReadingAtPath: backup.path) else {
            throw LibraryError.restoreFailed(path: backup.path, reason: "the file does not exist or cannot be read")
        }
        defer { try? source.close() }
        let fm = FileManager.default
        var movedAside: URL?
        var madeDirectory = false
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw LibraryError.restoreFailed(path: backup.path, reason: "\(directory.path) is a file, not a library directory")
            }
            let entries: [String]
            do {
                entries = try fm.contentsOfDirectory(atPath: directory.path)
            } catch {
                throw LibraryError.restoreFailed(path: backup.path, reason: "cannot list \(directory.path): \(BackupFile.describe(error))")
            }
            if !entries.isEmpty {
                guard force else {
                    throw LibraryError.restoreFailed(
                        path: backup.path,
                        reason: "the library directory \(directory.path) is not empty; restore into an empty one, or add --force to move it aside first")
                }
                try refuseIfInUse(directory, backup: backup)
                let aside = try asideName(for: directory)
                guard rename(directory.path, aside.path) == 0 else {
                    throw LibraryError.restoreFailed(path: backup.path, reason: "cannot move \(directory.path) aside: \(String(cString: strerror(errno)))")
                }
                movedAside = aside
            }
        }
        var created: [String] = []
        do {
            if !fm.fileExists(atPath: directory.path) {
                try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
                madeDirectory = true
            }
            try placeStore(from: source, contents: contents, into: directory, busyTimeout: busyTimeout, created: &created)
        } catch {
            // Leave things as they were: only the files this restore made go, and the library
            // that was moved aside comes back.
            for path in created.reversed() { unlink(path) }
            if madeDirectory || movedAside != nil { rmdir(directory.path) }
            var reason = error is LibraryError ? String(describing: error) : BackupFile.describe(error)
            if let movedAside, rename(movedAside.path, directory.path) != 0 {
                reason += "; the previous library is at \(movedAside.path): \(String(cString: strerror(errno)))"
            }
            if let error = error as? LibraryError, movedAside == nil || reason == String(describing: error) { throw error }
            throw LibraryError.restoreFailed(path: backup.path, reason: reason)
        }
        let db = try Connection(path: directory.appendingPathComponent("library.sqlite").path, mode: .readOnly)
        let storeID = try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'").flatMap(UUID.init(uuidString:)) ?? contents.storeID
        return RestoreReport(
            path: directory.path, backup: backup.path, movedAside: movedAside?.path, schemaVersionBefore: contents.schemaVersion,
            schemaVersion: try db.scalar(Int.self, "PRAGMA user_version") ?? contents.schemaVersion, storeID: storeID,
            restoredToken: contents.token, token: ChangeToken(storeID: storeID, transaction: contents.token.transaction),
            trackCount: try db.scalar(Int.self, "SELECT count(*) FROM track") ?? 0,
            playlistCount: try db.scalar(Int.self, "SELECT count(*) FROM playlist") ?? 0,
            userCount: try userCount(db), restoredSecretKey: contents.key != nil, backupCreated: contents.created)
    }

    /// Refuses to move a library aside while another process has it open (`shelf serve` would
    /// go on writing into the moved directory): leaving WAL mode needs the only connection, so a
    /// switch that is refused as busy means someone else is there. The mode is put back at once.
    private static func refuseIfInUse(_ directory: URL, backup: URL) throws {
        let store = directory.appendingPathComponent("library.sqlite").path
        guard FileManager.default.fileExists(atPath: store) else { return }
        do {
            let db = try Connection(path: store, mode: .readWrite(create: false), busyTimeoutMilliseconds: 0)
            let mode = try db.pragma("journal_mode = DELETE")
            if mode?.lowercased() == "delete" { _ = try? db.pragma("journal_mode = WAL") }
        } catch let error as SQLiteError where error.code == .busy || error.code == .locked {
            throw LibraryError.restoreFailed(
                path: backup.path,
                reason: "the library in \(directory.path) is open in another process (is `shelf serve` running on it?); stop it, then restore")
        } catch {
            // A store too damaged to switch modes is what a restore is for: go on.
        }
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
    /// dropped, a new store ID that remembers the old one, migrated to this build's schema, WAL),
    /// installs the key, and publishes the store under its name last, never over another file.
    /// Every path it makes goes into `created`, so a failure removes exactly those.
    private static func placeStore(
        from source: FileHandle, contents: BackupContents, into directory: URL, busyTimeout: Int, created: inout [String]
    ) throws {
        let store = directory.appendingPathComponent("library.sqlite")
        let temporary = try BackupFile.createPrivate(beside: store)
        defer { BackupFile.remove(temporary) }
        try copyFile(source, to: temporary)
        do {
            let db = try Connection(path: temporary.path, mode: .readWrite(create: false), busyTimeoutMilliseconds: Int32(busyTimeout))
            // The key must not stay behind in a free page of the store once its table is dropped.
            try db.execute(script: "PRAGMA secure_delete = ON")
            try db.transaction(.immediate) {
                try db.execute(script: "DROP TABLE shelf_backup")
                let earlier = try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'restored_stores'") ?? ""
                let entry = "\(contents.storeID.uuidString):\(contents.token.transaction)"
                try db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('restored_stores', ?)", [earlier.isEmpty ? entry : earlier + "," + entry])
                try db.execute("UPDATE meta SET value = ? WHERE key = 'store_id'", [UUID().uuidString])
                // Sessions are the one thing a restore must not bring back: one revoked since the
                // backup would sign in again. API keys and passwords are the backup's, as documented.
                if try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE name = 'user_session'") ?? 0 > 0 {
                    try db.execute("DELETE FROM user_session")
                }
            }
            // Migrated here, before it is published, so that every step that can fail comes first.
            if contents.schemaVersion >= 2 { try Migrations.run(on: db, from: contents.schemaVersion) }
            _ = try db.pragma("journal_mode = WAL")
            try db.execute(script: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        unlink(temporary.path + "-wal")
        unlink(temporary.path + "-shm")
        if let key = contents.key {
            try SecretKey.install(key, directory: directory)
            created.append(directory.appendingPathComponent(SecretKey.fileName).path)
        }
        SecretKey.forget(directory: directory)
        try BackupFile.publishNew(temporary, as: store)
        created.append(store.path)
    }

    /// A byte copy of the backup from its open handle, flushed before it is used.
    private static func copyFile(_ source: FileHandle, to destination: URL) throws {
        guard let output = FileHandle(forWritingAtPath: destination.path) else {
            throw LibraryError.restoreFailed(path: destination.path, reason: "cannot write the copy")
        }
        defer { try? output.close() }
        try source.seek(toOffset: 0)
        while let chunk = try source.read(upToCount: 1 << 20), !chunk.isEmpty {
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
