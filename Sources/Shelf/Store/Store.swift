import Foundation
import ShelfCore
import ShelfDatabase

/// The open canonical store: the write connection (owned by `LibraryActor`) and the facts read at
/// opening. Created once per `Library` by `Store.open`, shared by every later call.
@LibraryActor
final class Store {
    let writer: Connection
    let location: StoreLocation
    let storeID: UUID
    let readers: ReadPool
    let busyTimeoutMilliseconds: Int
    /// The read mirror, kept current after every write; nil until the library sets it up.
    var mirror: MirrorStore?
    /// Where write batches expose pictures before their commit (set by `Library`).
    var pendingArtwork: PendingArtwork?

    private init(writer: Connection, location: StoreLocation, storeID: UUID, readers: ReadPool, busyTimeout: Int) {
        self.writer = writer
        self.location = location
        self.storeID = storeID
        self.readers = readers
        self.busyTimeoutMilliseconds = busyTimeout
    }

    /// Opens (creating when absent) the store in `location`, refusing anything that is not a Shelf
    /// library of a version this build understands — before writing a single byte to it.
    static func open(_ location: StoreLocation, configuration: Library.Configuration) throws -> Store {
        let path = location.storePath.path
        try location.prepareDirectory()
        let timeout = configuration.busyTimeoutMilliseconds
        let writer: Connection
        do {
            writer = try Connection(path: path, mode: .readWrite(create: true), busyTimeoutMilliseconds: Int32(timeout))
        } catch let error as SQLiteError {
            throw LibraryError.cannotOpen(path: path, reason: error.message)
        }
        do {
            // Reading the header first validates the file: a non-SQLite file fails here, read-only.
            let version = try writer.scalar(Int.self, "PRAGMA user_version") ?? 0
            let objectCount = try writer.scalar(Int.self, "SELECT count(*) FROM sqlite_master") ?? 0
            if version > Schema.currentVersion {
                throw LibraryError.newerSchema(path: path, found: version, supported: Schema.currentVersion)
            }
            if version == 0 && objectCount > 0 {
                throw LibraryError.notALibrary(path: path, reason: "it is a SQLite database of another program")
            }
            if version == 1 { throw LibraryError.migrationRequired(path: path, from: 1) }
            try configureWriter(writer)
            try Migrations.run(on: writer, from: version)
            guard
                let storeID = try writer.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'")
                    .flatMap(UUID.init(uuidString:))
            else {
                throw LibraryError.notALibrary(path: path, reason: "its store ID is missing")
            }
            let readers = ReadPool(path: path, size: configuration.readerCount, busyTimeoutMilliseconds: Int32(timeout))
            return Store(writer: writer, location: location, storeID: storeID, readers: readers, busyTimeout: timeout)
        } catch {
            throw LibraryError.wrap(error, path: path, busyTimeoutMilliseconds: timeout)
        }
    }

    /// WAL so readers never wait for the writer; FULL sync because the store is the only copy of
    /// play counts and edits; foreign keys because playlist items and artwork references rely on them.
    private static func configureWriter(_ db: Connection) throws {
        let mode = try db.pragma("journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw LibraryError.cannotOpen(path: db.path, reason: "the file system does not support WAL (journal mode \(mode ?? "?"))")
        }
        try db.execute(script: "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32768;")
    }

    /// Runs `body` in one immediate transaction with a fresh `WriteBatch`; its change-log rows are
    /// written in the same transaction just before the commit.
    func write<T>(_ body: (WriteBatch) throws -> T) throws -> T {
        do {
            let batch = WriteBatch(db: writer, now: Date(), pending: pendingArtwork)
            // Pending pictures are visible to loaders only while their batch is open.
            defer { pendingArtwork?.remove(batch.registeredArtwork) }
            let (result, startSeq): (T, Int64)
            // Read-your-writes: the mirror reflects the batch before the write call returns. A batch
            // of known tracks is applied to the mirror while the canonical COMMIT waits for the
            // disk, and committed there only once the canonical COMMIT has succeeded.
            var staged: MirrorStore.StagedSync?
            do {
                (result, startSeq) = try writer.transaction(
                    .immediate,
                    whileCommitting: { [mirror] in
                        if let staged { mirror?.applyStaged(staged) }
                    }
                ) {
                    let startSeq = try writer.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") ?? 0
                    let result = try body(batch)
                    try batch.finish()
                    CrashPoint.reached(CrashPoint.beforeCommit)
                    // Staging only reads; if it fails, the batch goes the ordinary way after the commit.
                    staged = (try? mirror?.stage(BatchTracks(startSeq: startSeq, states: batch.trackStates))) ?? nil
                    return (result, startSeq)
                }
            } catch {
                mirror?.abandonStaged()
                pendingArtwork?.discard(batch.registeredArtwork)
                throw error
            }
            if let staged {
                mirror?.finishStaged(staged)
            } else {
                mirror?.syncAfterWrite(batch: BatchTracks(startSeq: startSeq, states: batch.trackStates))
            }
            return result
        } catch {
            throw LibraryError.wrap(error, path: location.storePath.path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
    }
}

/// Where a library's files live.
struct StoreLocation: Sendable {
    let directory: URL

    var storePath: URL { directory.appendingPathComponent("library.sqlite") }

    /// Creates the directory when absent and checks it is a writable directory.
    func prepareDirectory() throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw LibraryError.cannotCreateDirectory(path: directory.path, reason: "a file is in the way")
            }
        } else {
            do {
                try fm.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw LibraryError.cannotCreateDirectory(path: directory.path, reason: Self.reason(error))
            }
        }
        var isStoreDirectory: ObjCBool = false
        if fm.fileExists(atPath: storePath.path, isDirectory: &isStoreDirectory), isStoreDirectory.boolValue {
            throw LibraryError.cannotOpen(path: storePath.path, reason: "it is a directory")
        }
        if !fm.fileExists(atPath: storePath.path), !fm.isWritableFile(atPath: directory.path) {
            throw LibraryError.cannotOpen(path: storePath.path, reason: "the directory \(directory.path) is not writable")
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain, let code = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return String(cString: strerror(code.rawValue))
        }
        return nsError.localizedDescription
    }

    /// Bytes used by the store and its WAL files, and by the mirror when present.
    func bytesOnDisk() -> Int64 {
        let names = ["library.sqlite", "library.sqlite-wal", "library.sqlite-shm", "mirror.sqlite", "mirror.sqlite-wal", "mirror.sqlite-shm"]
        return names.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }
}
