import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase

/// The tracks of the write batch that just committed, and the change-log seq it started after.
struct BatchTracks {
    let startSeq: Int64
    let states: [TrackID: TrackState]
}

extension MirrorStore {
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
        var groups: [GroupKey: Int] = [:]
        func regroup(_ old: GroupMember?, _ new: GroupMember?) {
            guard old != new else { return }
            for key in Set((old?.groups ?? []) + (new?.groups ?? [])) { groups[key, default: 0] += 1 }
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
        try MirrorGroups.refresh(groups, in: db, deferLarge: deferringGroups > 0)
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
            CrashPoint.reached(CrashPoint.beforeMirrorCommit)
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

    // MARK: Imports

    /// Marks the start of an import: from now on large groups wait (see `MirrorGroups.refresh`).
    func beginDeferringGroups() { deferringGroups += 1 }

    /// Marks an import's end; the last one recomputes every waiting group. A failure leaves them
    /// waiting in the mirror, and the next write or opening recomputes them.
    func endDeferringGroups() {
        deferringGroups = max(0, deferringGroups - 1)
        if deferringGroups == 0 { flushPendingGroups() }
    }

    /// Recomputes the groups left waiting (by an import that ended, or a process that stopped
    /// during one); false when that failed and a rebuild started instead.
    @discardableResult
    func flushPendingGroups() -> Bool {
        guard state == .ready, staged == .none, let db = writer else { return state == .ready }
        do {
            try db.transaction { try MirrorGroups.flushPending(in: db) }
            return true
        } catch {
            try? startBuild(fresh: true)
            return false
        }
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
        CrashPoint.reached(CrashPoint.beforeMirrorCommit)
        do { try catchUp(batch: batch) } catch { try? startBuild(fresh: true) }
        checkpointIfLarge()
    }

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
}
