import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase

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
