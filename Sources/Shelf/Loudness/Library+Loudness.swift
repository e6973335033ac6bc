import Foundation
import ShelfCore

/// What `shelf loudness` (and the server's loudness job) measured and stored.
public struct LoudnessReport: Sendable, Codable, Equatable {
    /// One track's figures.
    public struct Measured: Sendable, Codable, Equatable {
        public var id: TrackID
        /// Integrated loudness in LUFS (nil: silence).
        public var integrated: Double?
        /// True peak, linear (1.0 = full scale).
        public var truePeak: Double
        /// The gains stored, against ReplayGain 2.0's −18 LUFS.
        public var trackGain: Double?
        public var albumGain: Double?
        /// Whether the gains were stored (a track whose tags have gains keeps them unless written).
        public var stored: Bool
    }

    /// A track that could not be measured or written, and why.
    public struct Failure: Sendable, Codable, Equatable {
        public var id: TrackID
        public var path: String
        public var error: String
    }

    public var measured: [Measured] = []
    /// Albums measured together (a track without an album is an album of one).
    public var albums = 0
    /// Files whose tags were rewritten (`--write-tags`).
    public var written = 0
    public var failed: [Failure] = []
    /// Seconds of audio measured, and the wall-clock seconds it took.
    public var audioSeconds = 0.0
    public var seconds = 0.0
}

/// Options of a loudness run.
public struct LoudnessOptions: Sendable {
    /// Which tracks: nil for those without any ReplayGain (`replayGain:no`).
    public var filter: Filter?
    /// Write `REPLAYGAIN_*` (and `R128_*` for Opus) into the files, atomically, as rsgain does.
    public var writeTags = false
    /// ffmpeg's nice level (the server's job runs at 10).
    public var niceness: Int32?
    /// ffmpeg to decode with (nil: on PATH).
    public var ffmpegPath: String?
    /// Tracks left out (the server's job skips those it measured as silent or could not decode).
    public var skip: Set<TrackID> = []

    /// Tracks without ReplayGain, gains stored in the library only.
    public init(filter: Filter? = nil, writeTags: Bool = false, niceness: Int32? = nil, ffmpegPath: String? = nil) {
        self.filter = filter
        self.writeTags = writeTags
        self.niceness = niceness
        self.ffmpegPath = ffmpegPath
    }
}

extension Library {
    /// Measures EBU R128 integrated loudness and true peak of the tracks `options` selects, per
    /// track and per album, and stores them as ReplayGain (−18 LUFS) on tracks whose tags carry
    /// none; with `writeTags` also into the files. An album's gain and peak are always of all its
    /// present tracks' audio together, whichever of them the filter selected: a selected track
    /// re-measures its whole album. With `writeTags`, tracks already measured are not decoded
    /// again: their stored figures are written into every file whose tags differ. One album per
    /// transaction: a run stopped (cancelled, killed) keeps what it finished, and the next run
    /// carries on with what is left.
    public func measureLoudness(
        _ options: LoudnessOptions = LoudnessOptions(), progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws -> LoudnessReport {
        let started = Date()
        let ffmpeg = try Self.findFFmpeg(options.ffmpegPath)
        let meter = LoudnessMeter(ffmpeg: ffmpeg, niceness: options.niceness)
        // Without a filter: what is not measured — and, writing tags, everything (what is measured
        // already is written without decoding it again).
        let selection = options.filter ?? (options.writeTags ? .all : .flag(.replayGain, false))
        let ids = try await snapshot(LibraryQuery(sort: .album, filter: selection)).filter { !options.skip.contains($0) }
        var report = LoudnessReport()
        let groups = try await loudnessAlbums(of: ids, skip: options.skip)
        let total = groups.reduce(0) { $0 + $1.tracks.count }
        var done = 0
        progress(0, total)
        for group in groups {
            try Task.checkCancellation()
            // Writing tags, an album all of whose tracks have figures is written as stored.
            let complete = group.tracks.allSatisfy { $0.details.replayGain?.trackGain != nil || $0.details.replayGain?.trackPeak != nil }
            if options.writeTags && complete {
                try await writeStored(group.tracks.filter { group.selected.contains($0.id) }, into: &report)
                done += group.tracks.count
                progress(done, total)
                continue
            }
            let inputs = group.tracks.map { track in
                LoudnessInput(url: URL(fileURLWithPath: track.filePath), start: track.details.cue?.start, end: track.details.cue?.end)
            }
            // The decode runs on a plain thread, which sees the task's cancellation through a flag.
            let cancelled = Locked(false)
            let result = try await withTaskCancellationHandler {
                try await Self.offPool { try meter.measure(inputs, isCancelled: { cancelled.withLock { $0 } }) }
            } onCancel: {
                cancelled.withLock { $0 = true }
            }
            report.albums += 1
            var measured: [(Track, LoudnessMeasurement)] = []
            for (track, outcome) in zip(group.tracks, result.tracks) {
                switch outcome {
                case .success(let value):
                    measured.append((track, value))
                    report.audioSeconds += track.duration ?? 0
                case .failure(let error): report.failed.append(.init(id: track.id, path: track.path, error: error.description))
                }
            }
            // A track without an album has no album gain; an album's gain is of all its tracks measured.
            let album = group.tracks.first.flatMap(Self.loudnessAlbumKey) != nil ? result.album : nil
            try await store(measured, album: album, writeTags: options.writeTags ? group.selected : [], into: &report)
            done += group.tracks.count
            progress(done, total)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// The albums of `ids` (in their order), each with every present track of the album, and
    /// which of them were selected; a track without an album is an album of one.
    private func loudnessAlbums(of ids: [TrackID], skip: Set<TrackID>) async throws -> [(tracks: [Track], selected: Set<TrackID>)] {
        var groups: [(tracks: [Track], selected: Set<TrackID>)] = []
        var keys: [String: Int] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            for track in try await tracks(ids: Array(ids[start..<min(ids.count, start + 500)]), fields: .withoutTexts).tracks {
                let key = Self.loudnessAlbumKey(track)
                if let key, let index = keys[key] {
                    groups[index].tracks.append(track)
                    groups[index].selected.insert(track.id)
                } else {
                    if let key { keys[key] = groups.count }
                    groups.append(([track], [track.id]))
                }
            }
        }
        // The album's tracks the filter left out are measured with it (its gain is of all of them).
        for index in groups.indices {
            guard let first = groups[index].tracks.first, let key = Self.loudnessAlbumKey(first), let album = first.album else { continue }
            let members = try await snapshot(LibraryQuery(sort: .album, filter: .text(.album, .equals(album))))
            let missing = members.filter { !groups[index].selected.contains($0) && !skip.contains($0) }
            guard !missing.isEmpty else { continue }
            let others = try await tracks(ids: missing, fields: .withoutTexts).tracks.filter { !$0.missing && Self.loudnessAlbumKey($0) == key }
            groups[index].tracks += others
        }
        return groups
    }

    /// Writes the stored figures of `tracks` into their files where the files' tags differ.
    private func writeStored(_ tracks: [Track], into report: inout LoudnessReport) async throws {
        var files: [TrackID: (size: Int64, modified: Date)] = [:]
        for track in tracks {
            guard let gain = track.details.replayGain else { continue }
            if let written = writeGainTags(track, gain, into: &report) { files[track.id] = written }
        }
        try await recordRewrites(files)
    }

    /// Writes `gain` into `track`'s file unless its tags hold it already; the file's new size and
    /// time when it was rewritten.
    private func writeGainTags(_ track: Track, _ gain: ReplayGain, into report: inout LoudnessReport) -> (size: Int64, modified: Date)? {
        if track.details.cue != nil {
            report.failed.append(
                .init(
                    id: track.id, path: track.path,
                    error: "\(track.path): a track of a CUE image has no tags of its own; its gain is stored in the library only"))
            return nil
        }
        let properties = Self.gainTags(gain, codec: track.codec)
        let url = URL(fileURLWithPath: track.path)
        if let current = try? TagFile.read(url), properties.allSatisfy({ current.properties[$0.key] == $0.value }) { return nil }
        do {
            let written = try AtomicRewrite.rewrite(url, cancelled: { false }) { copy in try TagFile.write(copy, properties) }
            report.written += 1
            return written
        } catch {
            report.failed.append(.init(id: track.id, path: track.path, error: "\(track.path): cannot write its tags: \(error)"))
            return nil
        }
    }

    /// Keeps the library's size and time of files rewritten, so that a rescan reads nothing again.
    private func recordRewrites(_ files: [TrackID: (size: Int64, modified: Date)]) async throws {
        guard !files.isEmpty else { return }
        try await write { batch in
            for (id, file) in files {
                try batch.updateTrack(id) { track in
                    track.fileSize = file.size
                    track.fileModified = file.modified
                }
            }
        }
    }

    /// Stores one album's figures (and writes them into the files of `writeTags`), in one transaction.
    private func store(_ measured: [(Track, LoudnessMeasurement)], album: LoudnessMeasurement?, writeTags: Set<TrackID>, into report: inout LoudnessReport)
        async throws
    {
        var files: [TrackID: (size: Int64, modified: Date)] = [:]
        var gains: [TrackID: ReplayGain] = [:]
        for (track, value) in measured {
            var gain = ReplayGain(
                trackGain: value.replayGain.map(Self.roundGain), trackPeak: Self.roundPeak(value.truePeak),
                albumGain: album?.replayGain.map(Self.roundGain), albumPeak: album.map { Self.roundPeak($0.truePeak) })
            gain.measured = true
            gains[track.id] = gain
            if writeTags.contains(track.id), let written = writeGainTags(track, gain, into: &report) { files[track.id] = written }
        }
        let values = measured
        let (storedGains, storedFiles) = (gains, files)
        let stored: Set<TrackID> = try await write { batch in
            var stored = Set<TrackID>()
            for (track, _) in values {
                guard let current = try batch.track(track.id), let gain = storedGains[track.id] else { continue }
                let tagged = current.details.replayGain.map { ($0.trackGain != nil || $0.albumGain != nil) && $0.measured != true } ?? false
                let file = storedFiles[track.id]
                // Tags a user put there win, unless the measurement was just written over them.
                guard !tagged || file != nil else { continue }
                try batch.updateTrack(track.id) { track in
                    track.details.replayGain = gain
                    if let file {
                        track.fileSize = file.size
                        track.fileModified = file.modified
                    }
                }
                stored.insert(track.id)
            }
            return stored
        }
        for (track, value) in measured {
            let gain = gains[track.id]
            report.measured.append(
                .init(
                    id: track.id, integrated: value.integrated, truePeak: value.truePeak, trackGain: gain?.trackGain, albumGain: gain?.albumGain,
                    stored: stored.contains(track.id)))
        }
    }

    /// The tags rsgain writes: `REPLAYGAIN_*` (gain "−6.52 dB", peak to six places), and for Opus
    /// `R128_*_GAIN` (Q7.8 against −23 LUFS), which Opus players read instead.
    static func gainTags(_ gain: ReplayGain, codec: String?) -> [String: String?] {
        func db(_ value: Double?) -> String? { value.map { String(format: "%.2f dB", $0) } }
        func peak(_ value: Double?) -> String? { value.map { String(format: "%.6f", $0) } }
        if codec == "opus" {
            func q78(_ value: Double?) -> String? { value.map { String(Int(((($0 - 5) * 256)).rounded())) } }
            return ["R128_TRACK_GAIN": q78(gain.trackGain), "R128_ALBUM_GAIN": q78(gain.albumGain)]
        }
        return [
            "REPLAYGAIN_TRACK_GAIN": db(gain.trackGain), "REPLAYGAIN_TRACK_PEAK": peak(gain.trackPeak),
            "REPLAYGAIN_ALBUM_GAIN": db(gain.albumGain), "REPLAYGAIN_ALBUM_PEAK": peak(gain.albumPeak),
        ]
    }

    static func roundGain(_ value: Double) -> Double { (value * 100).rounded() / 100 }
    static func roundPeak(_ value: Double) -> Double { (value * 1_000_000).rounded() / 1_000_000 }

    /// The album a track is measured with: its album artist (else artist) and album, in its
    /// folder; nil for a track without an album (measured alone).
    static func loudnessAlbumKey(_ track: Track) -> String? {
        guard !SortKey.isBlank(track.album) else { return nil }
        let owner = SortKey.isBlank(track.albumArtist) ? track.artist ?? "" : track.albumArtist ?? ""
        let folder = (track.filePath as NSString).deletingLastPathComponent
        return [owner, track.album ?? "", folder].joined(separator: "\u{1F}")
    }
}
