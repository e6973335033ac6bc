import Foundation
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

extension MirrorStore {
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
}
