import Dispatch
import Foundation
import ShelfDatabase

/// What `Library.inspect()` finds in a library's files, read as they are: opening the library
/// would change what is reported (an older schema is migrated, a missing mirror is started).
public struct LibraryInspection: Sendable, Equatable {
    /// `PRAGMA user_version` of `library.sqlite`: 0 for an empty file, `EngineVersions.storeSchema` when current.
    public var schemaVersion: Int
    /// The store's UUID; nil in an empty file, which the next open fills.
    public var storeID: UUID?
    /// What `PRAGMA quick_check` reported: `["ok"]` for a sound store, else one message per problem (at most 100).
    public var integrity: [String]
    /// The tracks the store holds.
    public var trackCount: Int
    /// The users the store holds: their passwords are encrypted with `secret.key`.
    public var userCount: Int
    /// The remembered music roots, in path order.
    public var musicRoots: [String]
    /// Bytes of the store, its WAL files and the mirror.
    public var bytesOnDisk: Int64
    /// The read mirror, as its file stands.
    public var mirror: MirrorInspection

    /// Whether `PRAGMA quick_check` found nothing wrong.
    public var isIntact: Bool { integrity == ["ok"] }
}

/// The read mirror (`mirror.sqlite`) as its file stands, and so what the next open of the library
/// does with it.
public struct MirrorInspection: Sendable, Equatable {
    /// Where the mirror is in its life.
    public enum State: String, Sendable, Equatable {
        /// Turned off: queries use the direct path, and opening builds nothing.
        case disabled
        /// No file yet: the next open creates it and starts its build.
        case missing
        /// A file of another store or mirror layout, or one that cannot be read: the next open
        /// builds it again from nothing (`reason` says which).
        case stale
        /// A build started and not finished: the next build resumes it from `phase`.
        case building
        /// Built; `behind` change-log entries are not applied yet, and the next open applies them.
        case ready
    }

    /// The state.
    public var state: State
    /// Why a stale mirror is rebuilt.
    public var reason: String?
    /// While building: the phase the file has reached.
    public var phase: MirrorBuildPhase?
    /// While building: tracks copied so far.
    public var builtTracks = 0
    /// While building: the tracks to copy.
    public var totalTracks = 0
    /// The last change-log entry the mirror reflects (ready only).
    public var appliedSeq: Int64 = 0
    /// Change-log entries written after `appliedSeq` (ready only).
    public var behind: Int64 = 0
    /// Bytes of `mirror.sqlite` and its WAL files.
    public var bytesOnDisk: Int64 = 0
}

extension Library {
    /// The store and the mirror as their files stand, for a diagnosis (`shelf doctor`); nil when
    /// there is no `library.sqlite`. Nothing is created, migrated or built, so a newer or older
    /// store is described rather than refused or upgraded; the reads are a read-only connection's
    /// (SQLite may leave the `-wal`/`-shm` files any WAL reader uses). Runs `PRAGMA quick_check`,
    /// which reads the whole store, on a thread of its own.
    public func inspect() async throws -> LibraryInspection? {
        let location = self.location
        let timeout = Int32(self.configuration.busyTimeoutMilliseconds)
        return try await Self.offPool { try Library.inspectNow(location, busyTimeoutMilliseconds: timeout) }
    }

    /// The blocking body of `inspect()`.
    static func inspectNow(_ location: StoreLocation, busyTimeoutMilliseconds timeout: Int32) throws -> LibraryInspection? {
        let path = location.storePath.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue { throw LibraryError.cannotOpen(path: path, reason: "it is a directory") }
        let db: Connection
        do {
            db = try Connection(path: path, mode: .readOnly, busyTimeoutMilliseconds: timeout)
        } catch let error as SQLiteError {
            throw LibraryError.cannotOpen(path: path, reason: error.message)
        }
        do {
            // The same refusals as `Store.open`, which reads these two first as well.
            let version = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
            let objectCount = try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master") ?? 0
            if version == 0 && objectCount > 0 {
                throw LibraryError.notALibrary(path: path, reason: "it is a SQLite database of another program")
            }
            let integrity: [String]
            do {
                integrity = try db.query("PRAGMA quick_check", []) { try $0.string(0) }
            } catch let error as SQLiteError where error.code == .corrupt || error.code == .notADatabase {
                // Damage bad enough to stop the check is its finding, not a failure to look.
                integrity = [error.message]
            }
            // The rest may be absent from an older schema or unreadable in a damaged store, which
            // `integrity` and the schema version already report.
            let storeID = (try? db.scalar(String.self, "SELECT value FROM meta WHERE key = 'store_id'")).flatMap(UUID.init(uuidString:))
            let roots = (try? db.query("SELECT path FROM music_root ORDER BY path", []) { try $0.string(0) }) ?? []
            let users = (try? Library.userCount(db)) ?? 0
            let tracks = (try? db.scalar(Int.self, "SELECT count(*) FROM track")) ?? 0
            let mirrorEnabled = (try? db.scalar(String.self, "SELECT value FROM meta WHERE key = 'mirror_enabled'")) != "0"
            // Read before the mirror's applied seq: a writer in between then makes the mirror look
            // closer to current, never further behind than it is.
            let currentSeq = (try? db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'")) ?? 0
            let mirror = inspectMirror(
                in: location.directory, storeID: storeID, enabled: mirrorEnabled, currentSeq: currentSeq, trackCount: tracks,
                busyTimeoutMilliseconds: timeout)
            return LibraryInspection(
                schemaVersion: version, storeID: storeID, integrity: integrity, trackCount: tracks, userCount: users, musicRoots: roots,
                bytesOnDisk: location.bytesOnDisk(), mirror: mirror)
        } catch {
            throw LibraryError.wrap(error, path: path, busyTimeoutMilliseconds: Int(timeout))
        }
    }

    /// The mirror's file judged by the rules `MirrorStore.start` applies when the library opens.
    static func inspectMirror(
        in directory: URL, storeID: UUID?, enabled: Bool, currentSeq: Int64, trackCount: Int, busyTimeoutMilliseconds timeout: Int32
    ) -> MirrorInspection {
        let path = directory.appendingPathComponent("mirror.sqlite").path
        let bytes = ["", "-wal", "-shm"].reduce(Int64(0)) { total, suffix in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        var inspection = MirrorInspection(state: .missing, bytesOnDisk: bytes)
        guard enabled else {
            inspection.state = .disabled
            return inspection
        }
        guard FileManager.default.fileExists(atPath: path) else { return inspection }
        do {
            let db = try Connection(path: path, mode: .readOnly, busyTimeoutMilliseconds: timeout)
            var meta: [String: String] = [:]
            try db.forEachRow("SELECT key, value FROM mirror_meta") { meta[try $0.string(0)] = try $0.string(1) }
            if meta["store_id"] != storeID?.uuidString {
                inspection.state = .stale
                inspection.reason = "it was built from another store"
            } else if meta["schema"] != String(EngineVersions.mirrorSchema) {
                inspection.state = .stale
                inspection.reason = "its layout is version \(meta["schema"] ?? "unknown"); this build's is \(EngineVersions.mirrorSchema)"
            } else if meta["state"] == "ready" {
                inspection.state = .ready
                inspection.appliedSeq = Int64(meta["applied_seq"] ?? "0") ?? 0
                inspection.behind = max(0, currentSeq - inspection.appliedSeq)
            } else {
                let phase = meta["build_phase"].flatMap(MirrorBuildPhase.init(rawValue:)) ?? .rows
                inspection.state = .building
                inspection.phase = phase
                inspection.builtTracks = phase == .rows ? Int(meta["build_rows"] ?? "0") ?? 0 : trackCount
                inspection.totalTracks = trackCount
            }
        } catch {
            inspection.state = .stale
            inspection.reason = "it cannot be read (\(error))"
        }
        return inspection
    }
}
