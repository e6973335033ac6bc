import Foundation
import ShelfCore
import ShelfDatabase

/// The derived read mirror (`mirror.sqlite`): built in chunks off the actor, then kept current from
/// the change log after every write batch, before the write call returns. Deleting the file is
/// always safe: it is rebuilt.
@LibraryActor
final class MirrorStore {
    let directory: URL
    let canonical: Connection
    let canonicalPath: String
    let storeID: UUID
    let options = SortKeyOptions()
    /// Publishes the mirror's read pool to `Library` (nil while it cannot answer).
    let publish: @Sendable (ReadPool?) -> Void
    let readerCount: Int

    var state: MirrorStatus.State = .disabled
    var writer: Connection?
    var readers: ReadPool?
    var appliedSeq: Int64 = 0
    var control: BuildControl
    var buildTask: Task<Void, any Error>?
    /// Tracks per build chunk (one mirror transaction, and the step a killed build resumes from).
    let chunkSize: Int
    /// Whether opening starts (or resumes) a build on its own; off, only `complete` builds, so
    /// that a short command neither pays for a build nor leaves one half-done behind it.
    let buildsInBackground: Bool
    /// Change-log entries beyond which catching up rebuilds instead.
    static let rebuildBacklog: Int64 = 50_000

    /// Whether the mirror's transaction for a staged batch is open, or failed and needs a rebuild.
    enum StagedOutcome { case none, open, failed }
    var staged: StagedOutcome = .none
    var checkpointing = false
    /// Imports under way: while any is, large groups wait (see `MirrorGroups.refresh`).
    var deferringGroups = 0
    /// WAL size above which a background checkpoint runs.
    static let checkpointBytes: Int64 = 16 << 20

    var path: URL { directory.appendingPathComponent("mirror.sqlite") }

    init(
        store: Store, readerCount: Int, chunkSize: Int = 5_000, buildsInBackground: Bool = true,
        publish: @escaping @Sendable (ReadPool?) -> Void
    ) {
        directory = store.location.directory
        canonical = store.writer
        canonicalPath = store.location.storePath.path
        storeID = store.storeID
        self.readerCount = readerCount
        self.chunkSize = max(1, chunkSize)
        self.buildsInBackground = buildsInBackground
        self.publish = publish
        control = BuildControl(chunkSize: self.chunkSize)
    }

    // MARK: Life cycle

    /// Brings the mirror up when enabled: catches a built mirror up from its `applied_seq`, or
    /// starts (or resumes) a background build.
    func start() {
        guard isEnabled else {
            state = .disabled
            return
        }
        do {
            let db = try openWriter()
            let meta = try readMeta(db)
            if meta["store_id"] != storeID.uuidString || meta["schema"] != String(MirrorSchema.version) {
                try startBuild(fresh: true)
            } else if meta["state"] == "ready" {
                appliedSeq = Int64(meta["applied_seq"] ?? "0") ?? 0
                state = .ready
                if try !catchUp() { return }
                // A rebuild started (a damaged file) is not served until it is complete.
                guard flushPendingGroups() else { return }
                readers = ReadPool(path: path.path, size: readerCount, busyTimeoutMilliseconds: 5_000)
                publish(readers)
            } else {
                try startBuild(fresh: false)
            }
        } catch {
            // A mirror that cannot open is rebuilt from scratch; the canonical store is untouched.
            try? startBuild(fresh: true)
        }
    }

    var isEnabled: Bool {
        (try? canonical.scalar(String.self, "SELECT value FROM meta WHERE key = 'mirror_enabled'")) != "0"
    }

    func setEnabled(_ enabled: Bool) throws {
        try canonical.execute(
            "INSERT INTO meta (key, value) VALUES ('mirror_enabled', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [enabled ? "1" : "0"])
    }

    func openWriter() throws -> Connection {
        if let writer { return writer }
        let db = try Connection(path: path.path)
        // Before anything is written (a new file takes it; an existing one keeps its own). 4 KiB:
        // a write batch dirties one page per row and index entry it touches, and smaller pages
        // took 2.5 ms off a 100-track batch at 500,500 tracks for 2 % more bytes than 8 KiB.
        _ = try db.pragma("page_size = \(MirrorSchema.pageSize)")
        _ = try db.pragma("journal_mode = WAL")
        // Derived data: a crash may lose the last sync, which the next open replays from applied_seq.
        // No automatic checkpoints on the write path: `syncAfterWrite` hands them to a background
        // connection, so a write batch never pays for copying the WAL back into the file.
        // journal_size_limit: a WAL reset after a checkpoint also gives its disk space back.
        try db.execute(script: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 4194304;")
        try db.execute(script: MirrorSchema.createSQL)
        writer = db
        return db
    }

    func readMeta(_ db: Connection) throws -> [String: String] {
        var meta: [String: String] = [:]
        try db.forEachRow("SELECT key, value FROM mirror_meta") { meta[try $0.string(0)] = try $0.string(1) }
        return meta
    }

    func setMeta(_ db: Connection, _ values: [String: String]) throws {
        for (key, value) in values {
            try db.execute(
                "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value])
        }
    }

    /// The newest change-log entry ever written (compaction never lowers it).
    func currentSeq() throws -> Int64 { try Self.currentSeq(in: canonical) }

    /// The change log's last position as the store `db` has it (0 for an empty log).
    nonisolated static func currentSeq(in db: Connection) throws -> Int64 {
        try db.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") ?? 0
    }

    /// The change-log position the mirror `db` has applied (nil when it cannot be read).
    nonisolated static func appliedSeq(in db: Connection) throws -> Int64? {
        (try db.scalar(String.self, "SELECT value FROM mirror_meta WHERE key = 'applied_seq'")).flatMap { Int64($0) }
    }

    /// Stops answering queries and cancels a running build: the one step that disabling, purging
    /// and rebuilding all begin with.
    func stopServing() {
        buildTask?.cancel()
        control.cancelled.withLock { $0 = true }
        publish(nil)
        readers = nil
    }

    func closeAndDelete() {
        stopServing()
        writer = nil
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path.path + suffix)
        }
    }

    // MARK: Settings

    func disable() throws {
        try setEnabled(false)
        stopServing()
        writer = nil
        state = .disabled
    }

    func enable() throws {
        try setEnabled(true)
        if state == .disabled { start() }
    }

    func purge() throws {
        try setEnabled(false)
        closeAndDelete()
        state = .disabled
    }

    /// Turns the mirror on if it was off, leaving any build to `complete`.
    func enableForBuild() throws {
        guard state == .disabled else { return }
        try setEnabled(true)
        start()
    }
}
