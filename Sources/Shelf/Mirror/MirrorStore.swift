import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase

/// The steps of a mirror build, in order. The step reached is kept in `mirror_meta` with the work
/// done inside it, so a killed build resumes there instead of starting again.
public enum MirrorBuildPhase: String, Sendable, Codable, CaseIterable {
    /// Copying canonical tracks in chunks, with their search rows and section counts.
    case rows
    /// Copying every playlist's items.
    case playlists
    /// Creating the sort indexes, one statement (and one step) each.
    case indexes
    /// Aggregating the album, artist, composer and genre views.
    case groups
    /// Indexing each distinct text value's trigrams, for contains-filters.
    case values
    /// Merging the search index's segments into one.
    case searchMerge
    /// Replaying the change log written since the build began, then switching to ready.
    case replay
}

/// How far a build has come: its phase and the steps done of that phase.
public struct MirrorBuildProgress: Sendable, Equatable {
    public var phase: MirrorBuildPhase
    public var done: Int
    public var total: Int

    /// A progress report of `done` of `total` steps in `phase`.
    public init(phase: MirrorBuildPhase, done: Int, total: Int) {
        self.phase = phase
        self.done = done
        self.total = total
    }
}

/// What `mirrorStatus()` reports about the read mirror.
public struct MirrorStatus: Sendable, Codable, Equatable {
    /// Where the mirror is in its life.
    public enum State: String, Sendable, Codable {
        /// Being built (or waiting for `shelf mirror build`); queries use the direct path meanwhile.
        case building
        /// Built and kept current with every write; queries use it.
        case ready
        /// Turned off: the file is kept (or purged) and queries use the direct path.
        case disabled
    }

    public var state: State
    /// Tracks copied so far and the tracks to copy, while building (read from the mirror file).
    public var builtTracks: Int
    public var totalTracks: Int
    /// The last change-log entry the mirror reflects.
    public var appliedSeq: Int64
    /// Bytes of `mirror.sqlite` and its WAL files.
    public var bytesOnDisk: Int64
    /// While building: the phase the file has reached, and the steps of it already on disk.
    public var phase: MirrorBuildPhase?
    public var phaseDone: Int
    public var phaseTotal: Int
    /// Whether a build is running in this process now (false: it resumes at the next build).
    public var buildRunning: Bool

    /// A status; the build fields default to "not building".
    public init(
        state: State, builtTracks: Int, totalTracks: Int, appliedSeq: Int64, bytesOnDisk: Int64,
        phase: MirrorBuildPhase? = nil, phaseDone: Int = 0, phaseTotal: Int = 0, buildRunning: Bool = false
    ) {
        self.state = state
        self.builtTracks = builtTracks
        self.totalTracks = totalTracks
        self.appliedSeq = appliedSeq
        self.bytesOnDisk = bytesOnDisk
        self.phase = phase
        self.phaseDone = phaseDone
        self.phaseTotal = phaseTotal
        self.buildRunning = buildRunning
    }
}

/// The tracks of the write batch that just committed, and the change-log seq it started after.
struct BatchTracks {
    let startSeq: Int64
    let states: [TrackID: TrackState]
}

/// Shared between the builder thread and the actor: the cancel flag and whom to tell of progress.
final class BuildControl: Sendable {
    let cancelled = Locked(false)
    let observer = Locked<(@Sendable (MirrorBuildProgress) -> Void)?>(nil)
    let chunkSize: Int

    init(chunkSize: Int) { self.chunkSize = chunkSize }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    func report(_ phase: MirrorBuildPhase, _ done: Int, _ total: Int) {
        observer.withLock { $0 }?(MirrorBuildProgress(phase: phase, done: done, total: total))
    }
}

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

    private(set) var state: MirrorStatus.State = .disabled
    private var writer: Connection?
    private var readers: ReadPool?
    private var appliedSeq: Int64 = 0
    private var control: BuildControl
    private var buildTask: Task<Void, any Error>?
    /// Tracks per build chunk (one mirror transaction, and the step a killed build resumes from).
    let chunkSize: Int
    /// Whether opening starts (or resumes) a build on its own; off, only `complete` builds, so
    /// that a short command neither pays for a build nor leaves one half-done behind it.
    let buildsInBackground: Bool
    /// Change-log entries beyond which catching up rebuilds instead.
    static let rebuildBacklog: Int64 = 50_000

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

    private func setEnabled(_ enabled: Bool) throws {
        try canonical.execute(
            "INSERT INTO meta (key, value) VALUES ('mirror_enabled', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [enabled ? "1" : "0"])
    }

    private func openWriter() throws -> Connection {
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

    private func readMeta(_ db: Connection) throws -> [String: String] {
        var meta: [String: String] = [:]
        try db.forEachRow("SELECT key, value FROM mirror_meta") { meta[try $0.string(0)] = try $0.string(1) }
        return meta
    }

    private func setMeta(_ db: Connection, _ values: [String: String]) throws {
        for (key, value) in values {
            try db.execute(
                "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value])
        }
    }

    /// The newest change-log entry ever written (compaction never lowers it).
    private func currentSeq() throws -> Int64 {
        try canonical.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") ?? 0
    }

    /// Stops answering queries and cancels a running build: the one step that disabling, purging
    /// and rebuilding all begin with.
    private func stopServing() {
        buildTask?.cancel()
        control.cancelled.withLock { $0 = true }
        publish(nil)
        readers = nil
    }

    private func closeAndDelete() {
        stopServing()
        writer = nil
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path.path + suffix)
        }
    }

    /// Prepares a build (`fresh` discards whatever file is there first) and, when builds run in
    /// the background or `launch` asks, starts it; otherwise it waits for `complete`.
    func startBuild(fresh: Bool, launch: Bool = false) throws {
        if fresh { closeAndDelete() } else { stopServing() }
        let db = try openWriter()
        let meta = try readMeta(db)
        if fresh || meta["state"] != "building" {
            try db.transaction {
                // A contentless index cannot DELETE; 'delete-all' empties it.
                try db.execute(
                    script:
                        "DELETE FROM mirror_track; DELETE FROM mirror_section; DELETE FROM mirror_playlist_item; DELETE FROM mirror_group; DELETE FROM mirror_group_section; DELETE FROM mirror_value; DELETE FROM mirror_value_recent; DELETE FROM mirror_value_text; DELETE FROM mirror_list; INSERT INTO mirror_search (mirror_search) VALUES ('delete-all');"
                )
                try setMeta(
                    db,
                    [
                        "store_id": storeID.uuidString, "schema": String(MirrorSchema.version), "state": "building",
                        "build_start_seq": String(try currentSeq()), "build_next_id": "0", "build_rows": "0",
                        "build_phase": MirrorBuildPhase.rows.rawValue, "applied_seq": "0",
                    ])
            }
        }
        state = .building
        buildTask = nil
        if launch || buildsInBackground { try launchBuild() }
    }

    /// Runs the prepared build from the phase and step on disk, off the actor.
    private func launchBuild(observer: (@Sendable (MirrorBuildProgress) -> Void)? = nil) throws {
        control.cancelled.withLock { $0 = true }
        let control = BuildControl(chunkSize: chunkSize)
        control.observer.withLock { $0 = observer }
        self.control = control
        let mirrorPath = path.path
        let canonicalPath = canonicalPath
        let options = options
        buildTask = Task.detached {
            do {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    DispatchQueue.global(qos: .utility).async {
                        continuation.resume(
                            with: Result {
                                try MirrorBuilder(mirrorPath: mirrorPath, canonicalPath: canonicalPath, options: options, control: control).run()
                            })
                    }
                }
            } catch {
                // The next `complete` (or open) resumes from the file instead of rethrowing this.
                await self.buildEnded(control)
                throw error
            }
            try await self.finishBuild(control: control)
        }
    }

    /// Brings a building mirror to ready, resuming a build where the file left it (or starting
    /// one), reporting each chunk and phase to `progress`; cancelling stops the build at its next
    /// step, which the next call resumes. A disabled mirror is left alone.
    /// A build may end by starting another (the log was compacted under it, or grew past the
    /// replay limit); the loop runs that one too, with the same observer and cancellation. Where
    /// builds run in the background, a cancelled caller does not stop the build: it is the
    /// library's, not the caller's, and the caller waits for the step in progress to end.
    func complete(progress: (@Sendable (MirrorBuildProgress) -> Void)?) async throws {
        let cancel = Locked<(requested: Bool, control: BuildControl?)>((false, nil))
        let cancelsBuild = !buildsInBackground
        try await withTaskCancellationHandler {
            while state == .building {
                if buildTask == nil { try launchBuild(observer: progress) } else { control.observer.withLock { $0 = progress } }
                let current = control
                defer { current.observer.withLock { $0 = nil } }
                let requested = cancel.withLock { state in
                    state.control = current
                    return state.requested
                }
                if requested {
                    if cancelsBuild { current.cancelled.withLock { $0 = true } }
                    throw CancellationError()
                }
                try await waitForBuild()
            }
        } onCancel: {
            cancel.withLock { state in
                state.requested = true
                if cancelsBuild { state.control?.cancelled.withLock { $0 = true } }
            }
        }
    }

    /// Waits for a running build to finish (tests and `shelf mirror build`).
    /// A build that finds the log compacted under it starts another; waiting follows it.
    func waitForBuild() async throws {
        while let task = buildTask {
            do {
                try await task.value
            } catch {
                // Stopped (Ctrl-C) or failed: the file keeps every finished step, and the next
                // build resumes from them instead of waiting on this task again.
                if buildTask == task { buildTask = nil }
                throw error
            }
            if buildTask == nil || buildTask == task { return }
        }
    }

    /// Forgets a build that stopped or failed, unless a newer one has replaced it.
    private func buildEnded(_ control: BuildControl) {
        if control === self.control { buildTask = nil }
    }

    /// The last step of a build, on the actor so that no write slips between the replay and the
    /// switch to `ready`: replays the change log from where the build started.
    private func finishBuild(control: BuildControl) throws {
        // A newer build replaced this one (its waiters follow that one), or the mirror was
        // turned off; a build stopped on request (Ctrl-C after its last step) is not finished.
        guard control === self.control, state == .building else { return }
        if control.isCancelled {
            buildTask = nil
            throw CancellationError()
        }
        let db = try openWriter()
        // The file's start point: the builder moves it up when it copies its first chunk.
        let startSeq = Int64(try readMeta(db)["build_start_seq"] ?? "0") ?? 0
        appliedSeq = startSeq
        try db.transaction {
            try setMeta(db, ["state": "ready", "applied_seq": String(startSeq), "build_phase": "", "build_next_id": "0"])
        }
        state = .ready
        if try !catchUp() { return }
        buildTask = nil
        readers = ReadPool(path: path.path, size: readerCount, busyTimeoutMilliseconds: 5_000)
        publish(readers)
    }

    // MARK: Sync

    /// Applies every change-log entry after `applied_seq`. Returns false when entries were
    /// compacted away first, in which case a rebuild was started instead.
    @discardableResult
    func catchUp(batch: BatchTracks? = nil) throws -> Bool {
        guard state == .ready, let db = writer else { return true }
        let current = try currentSeq()
        guard current > appliedSeq else { return true }
        let oldest = try canonical.scalar(Int64?.self, "SELECT min(seq) FROM change_log") ?? nil
        // Entries compacted away cannot be replayed; a very long backlog (a mirror that was off
        // during a big import) is cheaper to rebuild in bulk than to apply row by row.
        if oldest.map({ $0 > appliedSeq + 1 }) ?? true || current - appliedSeq > Self.rebuildBacklog {
            try startBuild(fresh: true)
            return false
        }
        var touched: [TrackID] = []
        var seen = Set<TrackID>()
        try canonical.forEachRow(
            "SELECT object_id FROM change_log WHERE seq > ? AND seq <= ? AND object_type = ? ORDER BY seq",
            [appliedSeq, current, ObjectType.track.rawValue]
        ) { row in
            let id = TrackID(try row.int64(0))
            if seen.insert(id).inserted { touched.append(id) }
        }
        var playlists: [Int64] = []
        try canonical.forEachRow(
            "SELECT DISTINCT object_id FROM change_log WHERE seq > ? AND seq <= ? AND object_type = ?",
            [appliedSeq, current, ObjectType.playlist.rawValue]
        ) { playlists.append(try $0.int64(0)) }
        // The batch just committed is exactly the backlog: its tracks before and after are in
        // memory, so no row is read back and only the columns of changed parts are recomputed.
        let states = batch.flatMap { $0.startSeq == appliedSeq ? $0.states : nil } ?? [:]
        try db.transaction {
            try applyTracks(touched, states: states, to: db)
            for playlist in playlists { try Self.copyItems(of: playlist, from: canonical, to: db) }
            try setMeta(db, ["applied_seq": String(current)])
        }
        appliedSeq = current
        return true
    }

    /// Applies the changes of `touched` tracks to the mirror's rows, search index, section counts
    /// and groups: from `states` where the batch knows a track's versions, else by reading the
    /// track back from the canonical store.
    private func applyTracks(_ touched: [TrackID], states: [TrackID: TrackState], to db: Connection) throws {
        var counts: [String: [UInt8: Int]] = [:]
        var groups = Set<GroupKey>()
        func regroup(_ old: GroupMember?, _ new: GroupMember?) {
            guard old != new else { return }
            for key in (old?.groups ?? []) + (new?.groups ?? []) { groups.insert(key) }
        }
        // The text fields each track may have a new value in, for the contains index.
        var newValues: [(TrackID, [Int])] = []
        let allValueFields = Array(MirrorValues.fields.indices)
        for id in touched {
            if let state = states[id], state.beforeKnown {
                // As the mirror sees them: a missing track has no row (`apply` does the same).
                let before = state.before.flatMap { $0.missing ? nil : $0 }
                let after = state.after.flatMap { $0.missing ? nil : $0 }
                if let after {
                    newValues.append((id, before.map { MirrorValues.changedFields(from: $0, to: after) } ?? allValueFields))
                }
                try apply(state, id: id, to: db, counts: &counts)
                regroup(before.map { GroupMember($0, options: options) }, after.map { GroupMember($0, options: options) })
                continue
            }
            let old = try db.queryOne(MirrorRow.selectAll, [id.rawValue]) { row in
                (0..<Int32(MirrorRow.columns.count)).map { row.value($0) }
            }
            let oldMember = try db.queryOne("SELECT \(GroupMember.columns) FROM mirror_track WHERE id = ?", [id.rawValue]) {
                try GroupMember(row: $0)
            }
            // A missing track has no row: the mirror is what browsing shows.
            let track = try canonical.queryOne(TrackRow.selectForMirror + " WHERE id = ?", [id.rawValue], TrackRow.decode).flatMap { $0.missing ? nil : $0 }
            regroup(oldMember, track.map { GroupMember($0, options: options) })
            switch (old, track) {
            case (let old?, let track?):
                let new = MirrorRow.values(track, options: options)
                // Only the fields whose text changed: a value a track keeps is indexed already,
                // and checking it again would add a duplicate.
                newValues.append(
                    (
                        id,
                        MirrorValues.fields.indices.filter {
                            old[MirrorValues.displayColumns[$0]] != new[MirrorValues.displayColumns[$0]]
                        }
                    ))
                try MirrorLists.reset(id, to: track, in: db)
                let changed = new.indices.filter { new[$0] != old[$0] }
                guard !changed.isEmpty else { continue }
                try db.execute(MirrorRow.update(changed), changed.map { new[$0] } + [id.rawValue])
                try SearchDocument.replace(MirrorRow.searchDocument(old), with: SearchDocument(track), id: id, in: db)
                Self.count(MirrorRow.sectionBytes(old), -1, into: &counts)
                Self.count(MirrorRow.sectionBytes(new), 1, into: &counts)
            case (nil, let track?):
                newValues.append((id, allValueFields))
                try insertRow(track, into: db, counts: &counts)
            case (let old?, nil):
                try db.execute("DELETE FROM mirror_track WHERE id = ?", [id.rawValue])
                try MirrorLists.reset(id, to: nil, in: db)
                try MirrorRow.searchDocument(old).delete(id: id, from: db)
                Self.count(MirrorRow.sectionBytes(old), -1, into: &counts)
            case (nil, nil): break
            }
        }
        try Self.flush(counts, to: db)
        try MirrorGroups.refresh(groups, in: db)
        try MirrorValues.add(try MirrorValues.values(of: newValues, in: db), to: db)
    }

    // MARK: Sync alongside the canonical commit

    /// A write batch's mirror changes, worked out before its canonical COMMIT so that they can be
    /// applied while that COMMIT waits for the disk.
    struct StagedSync {
        let touched: [TrackID]
        let states: [TrackID: TrackState]
        let current: Int64
    }

    /// Whether the mirror's transaction for a staged batch is open, or failed and needs a rebuild.
    private enum StagedOutcome { case none, open, failed }
    private var staged: StagedOutcome = .none

    /// Called inside the batch's canonical transaction, after its change-log rows are written:
    /// the staged sync of a batch that is exactly the backlog and whose every track is known in
    /// memory (the common case). nil sends the batch the ordinary way, after the commit: playlist
    /// changes (their items are copied from the canonical store), another writer's entries, or a
    /// mirror that is not ready.
    func stage(_ batch: BatchTracks) throws -> StagedSync? {
        guard state == .ready, writer != nil, batch.startSeq == appliedSeq else { return nil }
        let current = try currentSeq()
        guard current > appliedSeq, current - appliedSeq <= Self.rebuildBacklog else { return nil }
        var touched: [TrackID] = []
        var seen = Set<TrackID>()
        var onlyKnownTracks = true
        try canonical.forEachRow(
            "SELECT object_type, object_id FROM change_log WHERE seq > ? AND seq <= ? ORDER BY seq", [appliedSeq, current]
        ) { row in
            let type = try row.int64(0)
            if type == ObjectType.playlist.rawValue { onlyKnownTracks = false }
            // Artwork rows have no mirror columns of their own (a track's picture flag is a track change).
            guard type == ObjectType.track.rawValue else { return }
            let id = TrackID(try row.int64(1))
            if seen.insert(id).inserted { touched.append(id) }
            if batch.states[id]?.beforeKnown != true { onlyKnownTracks = false }
        }
        return onlyKnownTracks ? StagedSync(touched: touched, states: batch.states, current: current) : nil
    }

    /// Applies a staged batch in an open mirror transaction, while the canonical COMMIT runs on
    /// another thread; `finishStaged` commits it or `abandonStaged` rolls it back. Touches only
    /// the mirror's connection (every staged track is known in memory, so nothing is read back). A failure is remembered: the write still succeeds, and the mirror
    /// is rebuilt once the canonical outcome is known.
    func applyStaged(_ sync: StagedSync) {
        guard let db = writer else { return }
        do {
            try db.execute("BEGIN IMMEDIATE")
            staged = .open
            try applyTracks(sync.touched, states: sync.states, to: db)
            try setMeta(db, ["applied_seq": String(sync.current)])
        } catch {
            if db.isInTransaction { try? db.execute("ROLLBACK") }
            staged = .failed
        }
    }

    /// The canonical COMMIT succeeded: the staged changes are committed too (read-your-writes).
    func finishStaged(_ sync: StagedSync) {
        defer { staged = .none }
        switch staged {
        case .open:
            do {
                try writer?.execute("COMMIT")
                appliedSeq = sync.current
            } catch {
                abandonStaged()
                try? startBuild(fresh: true)
            }
            checkpointIfLarge()
        case .failed:
            try? startBuild(fresh: true)
        case .none:
            // Nothing was applied (the mirror closed meanwhile): catch up the ordinary way.
            if state == .ready { do { try catchUp() } catch { try? startBuild(fresh: true) } }
        }
    }

    /// The canonical COMMIT failed: the staged changes never happened.
    func abandonStaged() {
        if staged == .open, let db = writer, db.isInTransaction { try? db.execute("ROLLBACK") }
        staged = .none
    }

    /// Adds a track's row and search document, and counts its sections.
    private func insertRow(_ track: Track, into db: Connection, counts: inout [String: [UInt8: Int]]) throws {
        let new = MirrorRow.values(track, options: options)
        try db.execute(MirrorRow.upsert, new)
        try SearchDocument(track).insert(id: track.id, into: db)
        try MirrorLists.insert(track, into: db)
        Self.count(MirrorRow.sectionBytes(new), 1, into: &counts)
    }

    /// Applies one track's change from its in-memory versions.
    private func apply(_ state: TrackState, id: TrackID, to db: Connection, counts: inout [String: [UInt8: Int]]) throws {
        // A track going missing leaves the mirror and one coming back enters it, like a delete and an insert.
        switch (state.before.flatMap { $0.missing ? nil : $0 }, state.after.flatMap { $0.missing ? nil : $0 }) {
        case (let before?, let after?):
            try MirrorLists.replace(id, before: before, after: after, in: db)
            let sources = MirrorRow.Sources(changedFrom: before, to: after)
            guard !sources.isEmpty else { return }
            let old = MirrorRow.values(before, options: options, sources: sources)
            let new = MirrorRow.values(after, options: options, sources: sources)
            let changed = new.keys.filter { new[$0] != old[$0] }.sorted()
            guard !changed.isEmpty else { return }
            try db.execute(MirrorRow.update(changed), changed.map { new[$0]! } + [id.rawValue])
            if !sources.isDisjoint(with: .searched) {
                try SearchDocument.replace(SearchDocument(before), with: SearchDocument(after), id: id, in: db)
            }
            Self.count(MirrorRow.sectionBytes { old[$0] }, -1, into: &counts)
            Self.count(MirrorRow.sectionBytes { new[$0] }, 1, into: &counts)
        case (nil, let after?):
            try insertRow(after, into: db, counts: &counts)
        case (let before?, nil):
            try db.execute("DELETE FROM mirror_track WHERE id = ?", [id.rawValue])
            try MirrorLists.replace(id, before: before, after: nil, in: db)
            try SearchDocument(before).delete(id: id, from: db)
            Self.count(MirrorRow.sectionBytes(MirrorRow.values(before, options: options)), -1, into: &counts)
        case (nil, nil):
            break
        }
    }

    /// Replaces a playlist's items in the mirror with the canonical ones (none when it is gone).
    nonisolated static func copyItems(of playlist: Int64, from source: Connection, to mirror: Connection) throws {
        try mirror.execute("DELETE FROM mirror_playlist_item WHERE playlist_id = ?", [playlist])
        let insert = try mirror.cachedStatement("INSERT INTO mirror_playlist_item (playlist_id, position, track_id) VALUES (?, ?, ?)")
        try source.forEachRow("SELECT position, track_id FROM playlist_item WHERE playlist_id = ? ORDER BY position", [playlist]) { row in
            try insert.bind([playlist, try row.int64(0), try row.int64(1)])
            try insert.run()
        }
    }

    nonisolated static func count(_ bytes: [UInt8], _ delta: Int, into counts: inout [String: [UInt8: Int]]) {
        for (column, byte) in zip(MirrorSchema.sectionColumns, bytes) { counts[column, default: [:]][byte, default: 0] += delta }
    }

    /// The same for some sectioned columns (nil: not among the values).
    nonisolated static func count(_ bytes: [UInt8?], _ delta: Int, into counts: inout [String: [UInt8: Int]]) {
        for (column, byte) in zip(MirrorSchema.sectionColumns, bytes) {
            if let byte { counts[column, default: [:]][byte, default: 0] += delta }
        }
    }

    nonisolated static func flush(_ counts: [String: [UInt8: Int]], to db: Connection) throws {
        let statement = try db.cachedStatement(
            """
            INSERT INTO mirror_section (key_column, section, count) VALUES (?, ?, ?)
            ON CONFLICT (key_column, section) DO UPDATE SET count = count + excluded.count
            """)
        for (column, sections) in counts {
            for (byte, delta) in sections where delta != 0 {
                try statement.bind([column, Int64(byte), delta])
                try statement.run()
            }
        }
    }

    /// Called after every committed write batch: the mirror reflects it before the write returns.
    /// A failure here never fails the write (it is committed); the mirror is rebuilt instead.
    func syncAfterWrite(batch: BatchTracks) {
        guard state == .ready else { return }
        do { try catchUp(batch: batch) } catch { try? startBuild(fresh: true) }
        checkpointIfLarge()
    }

    private var checkpointing = false
    /// WAL size above which a background checkpoint runs.
    static let checkpointBytes: Int64 = 16 << 20

    /// Copies the mirror's WAL back into its file on a background connection once it grows large.
    /// PASSIVE never blocks readers or the writer; the WAL restarts at the next write after it.
    private func checkpointIfLarge() {
        guard !checkpointing else { return }
        let walPath = path.path + "-wal"
        let size = ((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? NSNumber)?.int64Value ?? 0
        guard size > Self.checkpointBytes else { return }
        checkpointing = true
        let mirrorPath = path.path
        Task.detached(priority: .background) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global(qos: .background).async {
                    if let db = try? Connection(path: mirrorPath) { _ = try? db.pragma("wal_checkpoint(PASSIVE)") }
                    continuation.resume()
                }
            }
            await self.checkpointFinished()
        }
    }

    private func checkpointFinished() { checkpointing = false }

    // MARK: Settings

    /// The mirror's state; while building, the phase and progress as the file records them, so a
    /// build killed in another process is reported truly.
    func status() -> MirrorStatus {
        let bytes = ["", "-wal", "-shm"].reduce(Int64(0)) { total, suffix in
            let attributes = try? FileManager.default.attributesOfItem(atPath: path.path + suffix)
            return total + ((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
        }
        var status = MirrorStatus(state: state, builtTracks: 0, totalTracks: 0, appliedSeq: appliedSeq, bytesOnDisk: bytes)
        guard state == .building, let db = try? openWriter(), let meta = try? readMeta(db) else { return status }
        let total = (try? canonical.scalar(Int.self, "SELECT count(*) FROM track")) ?? 0
        let phase = meta["build_phase"].flatMap(MirrorBuildPhase.init(rawValue:)) ?? .rows
        status.totalTracks = total
        status.builtTracks = phase == .rows ? Int(meta["build_rows"] ?? "0") ?? 0 : total
        status.phase = phase
        status.buildRunning = buildTask != nil
        switch phase {
        case .rows: (status.phaseDone, status.phaseTotal) = (status.builtTracks, max(total, status.builtTracks))
        case .indexes:
            let present = (try? MirrorSchema.presentSortIndexes(in: db)) ?? []
            (status.phaseDone, status.phaseTotal) = (present.count, MirrorSchema.sortIndexes.count)
        default: (status.phaseDone, status.phaseTotal) = (0, 1)
        }
        return status
    }

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

    /// Starts again from nothing; `launch` runs the build now, else `complete` (or the
    /// background build) runs it.
    func rebuild(launch: Bool) async throws {
        // A build still running (the one opening started) is stopped at its next step and
        // waited for first: deleting the file under a builder that is opening it fails that
        // builder with an I/O error, or lets it write into the new file.
        if let running = buildTask {
            control.cancelled.withLock { $0 = true }
            _ = try? await running.value
        }
        try setEnabled(true)
        try startBuild(fresh: true, launch: launch)
    }

    /// Turns the mirror on if it was off, leaving any build to `complete`.
    func enableForBuild() throws {
        guard state == .disabled else { return }
        try setEnabled(true)
        start()
    }
}

/// The off-actor part of a build: copies canonical tracks in chunks (one mirror transaction each,
/// resumable from `build_next_id`) through its own connections, then creates the sort indexes.
struct MirrorBuilder {
    let mirrorPath: String
    let canonicalPath: String
    let options: SortKeyOptions
    let control: BuildControl

    /// Each track with its row values and search document, computed on every core: keys and
    /// tokens are about a third of a build's work, and SQLite's inserts can only run on one thread.
    static func computeRows(_ tracks: [Track], options: SortKeyOptions) -> [(Track, [DatabaseValue], SearchDocument)] {
        parallelMap(tracks, minimumPerPart: 500) { ($0, MirrorRow.values($0, options: options), SearchDocument($0)) }
    }

    /// The canonical tracks of the chunk after track `id`.
    static func chunk(after id: Int64, size: Int, from source: Connection) throws -> [Track] {
        try source.query(TrackRow.selectForMirror + " WHERE id > ? ORDER BY id LIMIT ?", [id, size], TrackRow.decode)
    }

    /// The next chunk, read (through its own connection) and computed on a background queue.
    final class Prefetch: Sendable {
        /// The track ID the chunk follows: it is used only when the build resumes there.
        let after: Int64
        let rows = Locked<Result<[(Track, [DatabaseValue], SearchDocument)], any Error>>(.success([]))
        let done = DispatchSemaphore(value: 0)

        init(after: Int64, size: Int, canonicalPath: String, options: SortKeyOptions) {
            self.after = after
            DispatchQueue.global(qos: .utility).async { [self] in
                let computed = Result {
                    let source = try Connection(path: canonicalPath, mode: .readOnly)
                    return MirrorBuilder.computeRows(try MirrorBuilder.chunk(after: after, size: size, from: source), options: options)
                }
                rows.withLock { $0 = computed }
                done.signal()
            }
        }
    }

    func run() throws {
        // SHELF_MIRROR_TIMING=1 prints each phase's seconds to standard error (for benchmarks).
        let timing = ProcessInfo.processInfo.environment["SHELF_MIRROR_TIMING"] != nil
        var phaseStart = DispatchTime.now().uptimeNanoseconds
        func phase(_ name: String) {
            guard timing else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            FileHandle.standardError.write(Data(String(format: "mirror build: %@ %.1f s\n", name, Double(now - phaseStart) / 1e9).utf8))
            phaseStart = now
        }
        let source = try Connection(path: canonicalPath, mode: .readOnly)
        let mirror = try Connection(path: mirrorPath)
        try mirror.execute(script: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA journal_size_limit = 4194304;")
        func meta(_ key: String) throws -> String? {
            try mirror.scalar(String.self, "SELECT value FROM mirror_meta WHERE key = ?", [key])
        }
        func reached(_ phase: MirrorBuildPhase) throws {
            try mirror.execute("UPDATE mirror_meta SET value = ? WHERE key = 'build_phase'", [phase.rawValue])
        }
        func checkCancelled() throws { if control.isCancelled { throw CancellationError() } }
        var current = try meta("build_phase").flatMap(MirrorBuildPhase.init(rawValue:)) ?? .rows
        let order = MirrorBuildPhase.allCases
        /// Whether `phase` is still to do; every later phase starts by reporting itself.
        func due(_ phase: MirrorBuildPhase) throws -> Bool {
            if order.firstIndex(of: phase)! < order.firstIndex(of: current)! { return false }
            current = phase
            try checkCancelled()
            return true
        }

        if try due(.rows) {
            let total = try source.scalar(Int.self, "SELECT count(*) FROM track") ?? 0
            var built = Int(try meta("build_rows") ?? "0") ?? 0
            control.report(.rows, built, max(total, built))
            // Chunk N+1 is read and its rows computed in the background while chunk N is inserted:
            // computing keys and tokens takes about half as long as SQLite's inserts, which run on
            // one thread.
            var prefetched: Prefetch?
            defer { prefetched?.done.wait() }
            while true {
                try checkCancelled()
                // The resume point is read inside the chunk's write transaction: two processes
                // building the same mirror then take turns chunk by chunk instead of both copying
                // (and counting) the same rows. A prefetched chunk is used only if it starts there.
                let copied: Int = try mirror.transaction(.immediate) {
                    let next = Int64(try meta("build_next_id") ?? "0") ?? 0
                    // Until a chunk is copied the build reflects nothing, so it starts from the log
                    // as it is now (read before the chunk, so a write between them is replayed):
                    // writes made while it waited, such as an import into a library whose mirror
                    // waits for `complete`, are copied with the rows instead of replayed after.
                    if next == 0, prefetched == nil {
                        let seq = try source.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'") ?? 0
                        try mirror.execute("UPDATE mirror_meta SET value = ? WHERE key = 'build_start_seq'", [String(seq)])
                    }
                    let rows: [(Track, [DatabaseValue], SearchDocument)]
                    if let prefetch = prefetched, prefetch.after == next {
                        prefetch.done.wait()
                        rows = try prefetch.rows.withLock { $0 }.get()
                    } else {
                        prefetched?.done.wait()
                        rows = Self.computeRows(try Self.chunk(after: next, size: control.chunkSize, from: source), options: options)
                    }
                    prefetched = nil
                    guard let last = rows.last?.0 else {
                        try reached(.playlists)
                        return 0
                    }
                    prefetched = Prefetch(after: last.id.rawValue, size: control.chunkSize, canonicalPath: canonicalPath, options: options)
                    var counts: [String: [UInt8: Int]] = [:]
                    let upsert = try mirror.cachedStatement(MirrorRow.upsert)
                    // Missing tracks are read (the resume point is the chunk's last ID) but not copied.
                    for (track, values, document) in rows where !track.missing {
                        try upsert.bind(values)
                        try upsert.run()
                        try document.insert(id: track.id, into: mirror)
                        try MirrorLists.insert(track, into: mirror)
                        MirrorStore.count(MirrorRow.sectionBytes(values), 1, into: &counts)
                    }
                    try MirrorStore.flush(counts, to: mirror)
                    built = Int(try meta("build_rows") ?? "0") ?? 0
                    try mirror.execute(
                        "UPDATE mirror_meta SET value = CASE key WHEN 'build_next_id' THEN ? ELSE ? END WHERE key IN ('build_next_id', 'build_rows')",
                        [String(last.id.rawValue), String(built + rows.count)])
                    return rows.count
                }
                if copied == 0 { break }
                built += copied
                control.report(.rows, built, max(total, built))
            }
            phase("rows and search index")
        }
        /// A phase done as one transaction that also records the next phase, so a kill leaves
        /// it either wholly done or not begun.
        func oneStep(_ current: MirrorBuildPhase, then next: MirrorBuildPhase, timing: String, _ work: () throws -> Void) throws {
            guard try due(current) else { return }
            control.report(current, 0, 1)
            try mirror.transaction(.immediate) {
                try work()
                try reached(next)
            }
            control.report(current, 1, 1)
            phase(timing)
        }
        try oneStep(.playlists, then: .indexes, timing: "playlist items") {
            // Playlist items as they are now; changes made since the build began are replayed after it.
            try mirror.execute("DELETE FROM mirror_playlist_item")
            let playlists = try source.query("SELECT DISTINCT playlist_id FROM playlist_item", []) { try $0.int64(0) }
            for playlist in playlists { try MirrorStore.copyItems(of: playlist, from: source, to: mirror) }
        }
        if try due(.indexes) {
            // Each index is one step: a resumed build skips those already on disk.
            let indexes = MirrorSchema.sortIndexes
            let present = try MirrorSchema.presentSortIndexes(in: mirror)
            var done = present.count
            control.report(.indexes, done, indexes.count)
            for index in indexes where !present.contains(index.name) {
                try checkCancelled()
                try mirror.execute(script: index.sql)
                done += 1
                control.report(.indexes, done, indexes.count)
            }
            try reached(.groups)
            phase("sort indexes")
        }
        try oneStep(.groups, then: .values, timing: "groups") {
            try MirrorGroups.build(in: mirror) { control.isCancelled }
        }
        try oneStep(.values, then: .searchMerge, timing: "text values") {
            try MirrorValues.build(in: mirror) { control.isCancelled }
        }
        try oneStep(.searchMerge, then: .replay, timing: "search index merge") {
            // Chunks left the search indexes in many segments; one merged segment is smaller and
            // every search reads one doclist per token instead of one per segment.
            try mirror.execute("INSERT INTO mirror_search (mirror_search) VALUES ('optimize')")
            try mirror.execute("INSERT INTO mirror_value (mirror_value) VALUES ('optimize')")
        }
        _ = try due(.replay)
        control.report(.replay, 0, 1)
        // Each index was written through the WAL; leave the file alone on disk.
        _ = try? mirror.pragma("wal_checkpoint(TRUNCATE)")
        phase("checkpoint")
    }
}
