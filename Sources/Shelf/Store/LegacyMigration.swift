import CCrypto
import Foundation
import ShelfCore
import ShelfDatabase

/// How far a migration from the legacy layout has come.
public struct MigrationProgress: Sendable, Codable, Equatable {
    /// Tracks whose inline picture has been moved out, and all tracks that had one.
    public var moved: Int
    public var total: Int
    /// Distinct pictures stored so far (tracks with the same bytes share one).
    public var pictures: Int
}

/// What a finished migration did.
public struct MigrationReport: Sendable, Codable, Equatable {
    /// The version the store had before this call (2 or more when there was nothing to do).
    public var fromVersion: Int
    public var moved: Int
    public var pictures: Int
    /// File size before and after reclaiming the space the inline pictures took.
    public var bytesBefore: Int64
    public var bytesAfter: Int64
}

/// Moves a schema-1 store (pictures inline in `track.artwork_data`) to schema 2, in small chunks:
/// each chunk is one transaction that creates the artwork rows and clears the legacy column
/// together, so a crash or a cancellation between chunks loses nothing and a rerun resumes where
/// it stopped. Until the last step sets `user_version = 2` the store is still version 1, and
/// opening it answers `migrationRequired` instead of reading legacy rows.
struct LegacyMigration {
    let path: String
    let chunkSize: Int
    let isCancelled: @Sendable () -> Bool
    let progress: @Sendable (MigrationProgress) -> Void

    func run() throws -> MigrationReport {
        let bytesBefore = Self.size(path)
        let db = try Connection(path: path, mode: .readWrite(create: false), busyTimeoutMilliseconds: 5_000)
        let version = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
        guard version == 1 else {
            if (2...Schema.currentVersion).contains(version) {
                return MigrationReport(fromVersion: version, moved: 0, pictures: 0, bytesBefore: bytesBefore, bytesAfter: bytesBefore)
            }
            throw LibraryError.notALibrary(path: path, reason: "user_version \(version) is not a Shelf layout that can be migrated")
        }
        _ = try db.pragma("journal_mode = WAL")
        try db.execute(script: "PRAGMA synchronous = FULL;")
        try prepare(db)
        let total = try db.scalar(Int.self, "SELECT count(*) FROM track WHERE artwork_data IS NOT NULL OR artwork_id IS NOT NULL") ?? 0
        var moved = try db.scalar(Int.self, "SELECT count(*) FROM track WHERE artwork_id IS NOT NULL") ?? 0
        var pictures = try db.scalar(Int.self, "SELECT count(*) FROM artwork") ?? 0
        progress(MigrationProgress(moved: moved, total: total, pictures: pictures))
        // Rows go in ID order, so every row up to the last one moved is done: each chunk starts
        // after it instead of scanning the moved rows again.
        var lastID: Int64 = 0
        while true {
            if isCancelled() { throw CancellationError() }
            let (count, created, last): (Int, Int, Int64) = try db.transaction(.immediate) {
                let rows = try db.query(
                    "SELECT id, artwork_data FROM track WHERE id > ? AND artwork_data IS NOT NULL ORDER BY id LIMIT ?", [lastID, chunkSize]
                ) { (try $0.int64(0), try $0.data(1)) }
                var created = 0
                for (id, data) in rows {
                    let (artwork, isNew) = try store(data, in: db)
                    if isNew { created += 1 }
                    try db.execute("UPDATE track SET artwork_id = ?, artwork_data = NULL WHERE id = ?", [artwork, id])
                }
                return (rows.count, created, rows.last?.0 ?? lastID)
            }
            if count == 0 { break }
            moved += count
            pictures += created
            lastID = last
            progress(MigrationProgress(moved: moved, total: total, pictures: pictures))
        }
        if isCancelled() { throw CancellationError() }
        try finish(db)
        // Version 2 is where the chunked part ends; the ordinary steps take it the rest of the way.
        try Migrations.run(on: db, from: 2)
        // The inline pictures' pages are free now; give them back to the file system.
        _ = try? db.pragma("wal_checkpoint(TRUNCATE)")
        try db.execute(script: "VACUUM;")
        _ = try? db.pragma("wal_checkpoint(TRUNCATE)")
        return MigrationReport(fromVersion: 1, moved: moved, pictures: pictures, bytesBefore: bytesBefore, bytesAfter: Self.size(path))
    }

    /// Idempotent: the artwork table and the track's reference to it, beside the legacy column.
    private func prepare(_ db: Connection) throws {
        try db.transaction(.immediate) {
            try db.execute(
                script: """
                    CREATE TABLE IF NOT EXISTS artwork (
                      id         BLOB    PRIMARY KEY,
                      sha256     BLOB    NOT NULL UNIQUE,
                      byte_count INTEGER NOT NULL,
                      created    REAL    NOT NULL,
                      data       BLOB    NOT NULL
                    );
                    """)
            let columns = try db.query("PRAGMA table_info(track)", []) { try $0.string(1) }
            if !columns.contains("artwork_id") {
                try db.execute(
                    script:
                        "ALTER TABLE track ADD COLUMN artwork_id BLOB; ALTER TABLE track ADD COLUMN details TEXT; ALTER TABLE track ADD COLUMN missing_since REAL;"
                )
            }
        }
    }

    /// The picture's artwork row, created (`isNew`) unless the same bytes are already stored.
    private func store(_ data: Data, in db: Connection) throws -> (id: UUID, isNew: Bool) {
        let digest = WriteBatch.sha256(data)
        if let existing = try db.scalar(UUID.self, "SELECT id FROM artwork WHERE sha256 = ?", [digest]) { return (existing, false) }
        let id = UUID()
        try db.execute(
            "INSERT INTO artwork (id, sha256, byte_count, created, data) VALUES (?, ?, ?, ?, ?)",
            [id, digest, data.count, Date(), data])
        return (id, true)
    }

    /// One transaction: the legacy tables are renamed, the version-2 layout created, every row
    /// copied (track IDs and the ID sequence kept), the legacy tables dropped, the version set.
    private func finish(_ db: Connection) throws {
        try db.transaction(.immediate) {
            let sequence = try db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'track'") ?? 0
            let legacy = ["meta", "artwork", "track", "playlist", "playlist_item"]
            for table in legacy { try db.execute(script: "ALTER TABLE \(table) RENAME TO legacy_\(table);") }
            // Indexes keep their names through a rename; the new layout creates its own.
            let indexes = try db.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name LIKE 'legacy_%'", []
            ) { try $0.string(0) }
            for index in indexes { try db.execute(script: "DROP INDEX \"\(index)\";") }
            try db.execute(script: Schema.version2)
            try db.execute(script: "INSERT INTO meta SELECT * FROM legacy_meta;")
            if try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'") == nil {
                try db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", [UUID().uuidString])
            }
            try db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('migrated_from_version_1', ?)",
                [ISO8601DateFormatter().string(from: Date())])
            for table in ["artwork", "track", "playlist", "playlist_item"] {
                let columns = try db.query("PRAGMA table_info(\(table))", []) { try $0.string(1) }.joined(separator: ", ")
                try db.execute(script: "INSERT INTO \(table) (\(columns)) SELECT \(columns) FROM legacy_\(table);")
            }
            try db.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'track'", [sequence])
            for table in legacy.reversed() { try db.execute(script: "DROP TABLE legacy_\(table);") }
            try db.execute(script: "PRAGMA user_version = 2;")
        }
    }

    static func size(_ path: String) -> Int64 {
        ["", "-wal"].reduce(Int64(0)) { total, suffix in
            total + (((try? FileManager.default.attributesOfItem(atPath: path + suffix))?[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }
}

extension Library {
    /// Migrates a store in the legacy layout (schema 1, pictures inline) to the current one; does
    /// nothing for a current store. Cancelling the task stops it between chunks; calling it again
    /// resumes. Runs off `LibraryActor`; the library must not be in use meanwhile.
    public func migrateLegacyStore(
        chunkSize: Int = 200, progress: @escaping @Sendable (MigrationProgress) -> Void = { _ in }
    ) async throws -> MigrationReport {
        let path = storeURL.path
        guard FileManager.default.fileExists(atPath: path) else { throw LibraryError.cannotOpen(path: path, reason: "no store here") }
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global(qos: .userInitiated).async {
                    continuation.resume(
                        with: Result {
                            do {
                                return try LegacyMigration(
                                    path: path, chunkSize: max(1, chunkSize), isCancelled: { cancelled.withLock { $0 } }, progress: progress
                                ).run()
                            } catch let error as CancellationError {
                                throw error
                            } catch {
                                throw LibraryError.wrap(error, path: path, busyTimeoutMilliseconds: 5_000)
                            }
                        })
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }
}

/// Writes stores in the legacy layout, for tests and the benchmark that measure the migration.
package enum LegacyStore {
    /// Creates a schema-1 store at `directory/library.sqlite` holding `tracks` (IDs assigned in
    /// order), each with the inline picture `picture(index)` returns.
    package static func create(at directory: URL, tracks: [Track], picture: (Int) -> Data?) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let db = try Connection(path: directory.appendingPathComponent("library.sqlite").path)
        _ = try db.pragma("journal_mode = WAL")
        try db.execute(script: Schema.legacyVersion1 + "; PRAGMA user_version = 1;")
        try db.execute("INSERT INTO meta (key, value) VALUES ('store_id', ?)", [UUID().uuidString])
        // Rows go in through the current insert (temporary artwork_id, details and missing_since columns take their NULLs),
        // then the picture goes inline and the temporary column is dropped again.
        try db.execute(
            script: "ALTER TABLE track ADD COLUMN artwork_id BLOB; ALTER TABLE track ADD COLUMN details TEXT; ALTER TABLE track ADD COLUMN missing_since REAL;")
        let insert = try db.prepare(TrackRow.insert)
        let inline = try db.prepare("UPDATE track SET artwork_data = ? WHERE id = ?")
        try db.transaction(.immediate) {
            for (index, var track) in tracks.enumerated() {
                track.artworkID = nil
                insert.reset()
                try insert.bindNull(at: 1)
                try TrackRow.bindFields(track, to: insert, from: 2)
                try insert.run()
                if let data = picture(index) {
                    try inline.bind([data, db.lastInsertRowID])
                    try inline.run()
                }
            }
        }
        try db.execute(script: "ALTER TABLE track DROP COLUMN artwork_id; ALTER TABLE track DROP COLUMN details; ALTER TABLE track DROP COLUMN missing_since;")
        _ = try db.pragma("wal_checkpoint(TRUNCATE)")
    }
}
