import Foundation
import ShelfCore
import ShelfDatabase

/// How `Library.analyze` runs.
public struct AnalysisOptions: Sendable {
    /// Which tracks (nil: all).
    public var filter: Filter?
    /// The worker's command: the `shelf` executable and `analyze-worker`.
    public var workerCommand: [String]
    /// Workers at once (each a process decoding one file at a time).
    public var workers: Int
    /// The workers' niceness (the server's background runs use 10).
    public var niceness: Int32?
    /// Seconds one file may take before its worker is killed and the file marked failed.
    public var timeout: Double

    /// Options running `workerCommand` with `workers` workers.
    public init(workerCommand: [String], filter: Filter? = nil, workers: Int = 1, niceness: Int32? = nil, timeout: Double = 300) {
        self.workerCommand = workerCommand
        self.filter = filter
        self.workers = max(1, workers)
        self.niceness = niceness
        self.timeout = timeout
    }
}

/// What one analysis run did.
public struct AnalysisReport: Sendable, Codable, Equatable {
    /// One file without features: its path, how it ended and why.
    public struct Failure: Sendable, Codable, Equatable {
        /// The file analysed.
        public var path: String
        /// `failed`, `short` or `silent`.
        public var status: SonicStatus
        /// Why, in words.
        public var reason: String
    }

    /// Audio identities analysed now (with features or with a recorded reason).
    public var analyzed = 0
    /// Tracks whose audio was already analysed at the current feature version.
    public var skipped = 0
    /// Those analysed now that have no features, with the reason.
    public var failed: [Failure] = []
    /// Seconds of audio decoded and the wall-clock seconds the run took.
    public var audioSeconds = 0.0
    public var seconds = 0.0

    /// An empty report.
    public init() {}
}

/// How far analysis has come over the whole library (`/api/analysis`, the admin page).
public struct AnalysisCounts: Sendable, Codable, Equatable {
    /// Tracks whose audio has current features.
    public var done: Int
    /// Tracks whose audio has a current failure (failed, short, silent) recorded.
    public var failed: Int
    /// Tracks not analysed at the current version.
    public var pending: Int
}

extension Library {
    /// The key analysis is stored under: the audio hash (with `#NN` for a CUE track, whose
    /// image's hash all its tracks share), or the path for a file without a hash.
    static func sonicKey(_ track: Track) -> String {
        guard let hash = track.audioHash else { return "path:" + track.path }
        guard track.details.cue != nil, let mark = track.path.lastIndex(of: "#") else { return hash }
        return hash + track.path[mark...]
    }

    /// `sonicKey` in SQL over `track t` (a CUE track's path ends in `#` and two or three digits).
    static let sonicKeySQL = """
        CASE WHEN t.audio_hash IS NULL THEN 'path:' || t.path
          WHEN t.path GLOB '*#[0-9][0-9][0-9]' THEN t.audio_hash || substr(t.path, -4)
          WHEN t.path GLOB '*#[0-9][0-9]' THEN t.audio_hash || substr(t.path, -3)
          ELSE t.audio_hash END
        """

    /// Listens to the tracks `options` selects whose audio has no result at the current feature
    /// version, in child worker processes (a file a worker dies on is recorded as failed with the
    /// reason, and a new worker carries on). Each result is stored as it arrives, so a run stopped
    /// by Ctrl-C or a kill loses at most the files in flight; cancelling interrupts the workers
    /// and records nothing for the files they had.
    public func analyze(
        _ options: AnalysisOptions, progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws -> AnalysisReport {
        let started = Date()
        var report = AnalysisReport()
        let ids = try await snapshot(LibraryQuery(sort: .path, filter: options.filter ?? .all))
        // One job per audio identity; the tracks beyond the first of each share its result.
        var jobs: [(key: String, path: String, start: Double?, end: Double?)] = []
        var seen = Set<String>()
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = try await tracks(ids: Array(ids[start..<min(ids.count, start + 500)]), fields: .all).tracks
            let keys = chunk.map(Self.sonicKey)
            let current = try await read { db in
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
                return Set(
                    try db.query(
                        "SELECT audio FROM sonic WHERE version = ? AND audio IN (\(marks))", [SonicFeatures.version] + keys.map { $0 as (any SQLiteBindable)? }
                    ) { row in try row.string(0) })
            }
            for (track, key) in zip(chunk, keys) {
                if current.contains(key) || !seen.insert(key).inserted {
                    report.skipped += 1
                    continue
                }
                jobs.append((key, track.filePath, track.details.cue?.start, track.details.cue?.end))
            }
        }
        let work = jobs
        let total = work.count
        progress(0, total)
        let next = Locked(0)
        let shared = Locked(report)
        let options = options
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(options.workers, max(total, 1)) {
                group.addTask { [self] in
                    var worker: WorkerProcess?
                    defer { worker?.finish() }
                    while true {
                        try Task.checkCancellation()
                        let index = next.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < work.count else { return }
                        let job = work[index]
                        if worker == nil {
                            var command = options.workerCommand
                            if let niceness = options.niceness { command += ["--nice", String(niceness)] }
                            worker = try WorkerProcess(command: command)
                        }
                        guard let current = worker else { return }
                        let answer = try await withTaskCancellationHandler {
                            try await Self.offPool { current.analyze(job.path, start: job.start, end: job.end, timeout: options.timeout) }
                        } onCancel: {
                            current.interrupt()
                        }
                        let outcome: SonicOutcome
                        switch answer {
                        case .reply(let value): outcome = value
                        case .timedOut:
                            worker = nil
                            outcome = SonicOutcome(status: .failed, reason: "the analysis took longer than \(Int(options.timeout)) s; the worker was stopped")
                        case .died(let signal, let status):
                            worker = nil
                            // Ctrl-C reaches the worker too: the file was interrupted, not at fault.
                            if Task.isCancelled || signal == SIGINT { throw CancellationError() }
                            let how = signal.map { "signal \($0)\(strsignal($0).map { " (\(String(cString: $0)))" } ?? "")" } ?? "exit status \(status)"
                            outcome = SonicOutcome(status: .failed, reason: "the analysis worker died on this file (\(how))")
                        }
                        try await storeSonic(key: job.key, outcome: outcome)
                        let done = shared.withLock { report -> Int in
                            report.analyzed += 1
                            report.audioSeconds += outcome.seconds
                            if outcome.status != .ok {
                                report.failed.append(.init(path: job.path, status: outcome.status, reason: outcome.reason ?? outcome.status.rawValue))
                            }
                            return report.analyzed
                        }
                        progress(done, total)
                    }
                }
            }
            try await group.waitForAll()
        }
        report = shared.withLock { $0 }
        report.failed.sort { $0.path < $1.path }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Stores one result under its audio identity, replacing an older version's.
    func storeSonic(key: String, outcome: SonicOutcome) async throws {
        try await write { batch in
            try batch.db.execute(
                "INSERT OR REPLACE INTO sonic (audio, version, status, reason, seconds, features, analyzed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [key, SonicFeatures.version, outcome.status.rawValue, outcome.reason, outcome.seconds, outcome.features.map { Data($0.blob) }, Date()])
        }
    }

    /// A track's features at the current version, nil when its audio has none (yet).
    public func sonicFeatures(of id: TrackID) async throws -> SonicFeatures? { try await sonicRecord(of: id)?.features }

    /// What analysis recorded for a track's audio at the current version (features, or the
    /// status and reason there are none); nil when it is not analysed yet.
    public func sonicRecord(of id: TrackID) async throws -> SonicRecord? {
        guard let track = try await track(id) else { throw LibraryError.trackNotFound(id) }
        let key = Self.sonicKey(track)
        return try await read { db in
            try db.queryOne("SELECT status, reason, features, analyzed FROM sonic WHERE audio = ? AND version = ?", [key, SonicFeatures.version]) { row in
                SonicRecord(
                    status: SonicStatus(rawValue: row.optionalString(0) ?? "") ?? .failed, reason: row.optionalString(1),
                    features: row.optionalData(2).flatMap { SonicFeatures(blob: Array($0)) }, analyzed: Date(timeIntervalSince1970: row.nonNullDouble(3)))
            }
        }
    }

    /// Whether any audio has features at the current version (the sonicSimilarity extension is
    /// advertised from then on).
    public func hasSonicFeatures() async throws -> Bool {
        try await read { db in
            try db.scalar(Int.self, "SELECT 1 FROM sonic WHERE version = ? AND status = 'ok' LIMIT 1", [SonicFeatures.version]) != nil
        }
    }

    /// The bytes the `sonic` table and its key index take on disk per stored row (SQLite's
    /// `dbstat` pages; the rows' own lengths where SQLite was built without it).
    public func sonicStoredBytesPerTrack() async throws -> Double {
        try await read { db in
            let rows = Double(try db.scalar(Int.self, "SELECT count(*) FROM sonic") ?? 0)
            guard rows > 0 else { return 0 }
            let pages = try? db.scalar(Int.self, "SELECT sum(pgsize) FROM dbstat WHERE name IN ('sonic', 'sqlite_autoindex_sonic_1')")
            if let pages { return Double(pages) / rows }
            let lengths = try db.scalar(Double.self, "SELECT sum(2 * length(audio) + coalesce(length(features), 0) + 32) FROM sonic") ?? 0
            return lengths / rows
        }
    }

    /// How many tracks are analysed, failed and waiting, over the whole library.
    public func analysisCounts() async throws -> AnalysisCounts {
        try await read { db in
            let rows = try db.query(
                """
                SELECT s.status, count(*) FROM track t
                LEFT JOIN sonic s ON s.audio = (\(Self.sonicKeySQL)) AND s.version = ?
                WHERE t.missing_since IS NULL GROUP BY s.status
                """, [SonicFeatures.version]
            ) { row in (row.optionalString(0), Int(row.nonNullInt64(1))) }
            var counts = AnalysisCounts(done: 0, failed: 0, pending: 0)
            for (status, count) in rows {
                switch status {
                case "ok": counts.done += count
                case nil: counts.pending += count
                default: counts.failed += count
                }
            }
            return counts
        }
    }
}
