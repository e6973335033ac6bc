import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase
import Synchronization

/// What an import did; the JSON of `shelf import`.
public struct ImportReport: Sendable, Codable, Equatable {
    /// A file whose audio is already in the library under another path that still exists.
    public struct Duplicate: Sendable, Codable, Equatable {
        public var path: String
        public var existing: String
    }

    /// A file that could not be imported, and why.
    public struct Failure: Sendable, Codable, Equatable {
        public var path: String
        public var error: String
    }

    public var added = 0
    public var updated = 0
    public var unchanged = 0
    /// Files recognised by their audio as a track whose file is gone: the track took the new path.
    public var moved = 0
    public var duplicates: [Duplicate] = []
    public var failed: [Failure] = []
    /// What was imported but not all of it: a folder picture that is no picture or beyond the
    /// decoder's limits, a lyrics file that is not UTF-8, a malformed ReplayGain, BPM or date tag
    /// (the tracks came in without them).
    public var warnings: [Failure] = []
    /// Playlist files (`.m3u`, `.m3u8`) made into playlists or brought up to date.
    public var playlists = 0
    /// Write transactions committed.
    public var commits = 0
    /// The settings the import read the files with.
    public var settings: ImportSettings?
    public var seconds = 0.0
}

/// How an import is going: files handled of those found, speed and the time left.
public struct ImportProgress: Sendable, Equatable {
    public var done: Int
    public var total: Int
    public var filesPerSecond: Double
    public var secondsLeft: Double?
}

/// Settings of an import.
public struct ImportOptions: Sendable {
    /// Files parsed and written per transaction.
    public var chunkSize: Int
    /// The most file bytes a transaction's chunk reads: a chunk's tags, pictures of a few MB
    /// included, are held until its transaction, so 500 four-minute files with embedded covers
    /// held 290 MB at once.
    public var chunkBytes: Int64
    /// Import files whose audio is already in the library (by default they are only reported).
    public var importDuplicates: Bool
    /// How tags split into lists and which pictures and lyrics come first; nil: the library's own
    /// (`Library.importSettings()`), which is what every import should use unless it is testing one.
    public var settings: ImportSettings?
    /// The library (by ID) whose roots the imported folders become; nil: the first library.
    public var library: Int?

    /// Chunks of 500 files or 512 MiB; duplicates reported, not imported; the library's settings; folders
    /// remembered as roots of the first library.
    public init(
        chunkSize: Int = 500, chunkBytes: Int64 = 512 << 20, importDuplicates: Bool = false, settings: ImportSettings? = nil, library: Int? = nil
    ) {
        self.chunkSize = chunkSize
        self.chunkBytes = chunkBytes
        self.importDuplicates = importDuplicates
        self.settings = settings
        self.library = library
    }
}

/// One file as read off the disk before its chunk's transaction.
struct ParsedFile: Sendable {
    let url: URL
    let size: Int64
    let modified: Date
    /// The tags, the identity and the legacy identity (see `AudioIdentity.identities`).
    let result: Result<(AudioFileTags, String, String?), TagReadFailure>
    /// The picture file beside it, where the settings let it stand in for or before the file's own.
    var folderPicture: Data?
    /// The lyrics file beside it, likewise.
    var lyricsFile: String?
    /// What was beside it (`SidecarStamp`).
    var sidecars = ""
    /// The CUE sheet that splits it into tracks (an audio image).
    var cue: CueSource?
    /// The track its tags make, and what in them was malformed (read with the parse, on every core).
    var reading: (track: Track, problems: [String])?
}

/// What the library knows of a path before its chunk is read.
struct KnownFile {
    let size: Int64
    let modified: Double?
    /// `SidecarStamp` as of the last read ("" for none).
    let sidecars: String
    /// The album artist an `artist.*` picture beside it would belong to.
    let owner: ArtistPictures.Owner?
}

/// A read failure's text, `Sendable` and `Error`.
struct TagReadFailure: Error, Sendable {
    let message: String
}

extension Library {
    /// Imports the audio files under `paths` (files or directories, recursively). Unchanged files
    /// (same path, size and modification time) are skipped without parsing; changed ones are
    /// re-read keeping their track's ID, play counts and rating; a file whose audio matches a
    /// track whose file is gone is that track, moved; one whose audio matches a track still on
    /// disk is reported as a duplicate. One transaction per chunk: a killed import leaves every
    /// finished chunk in place and a rerun carries on. Cancelling stops between chunks.
    public func importFiles(
        at paths: [URL], options: ImportOptions = ImportOptions(), progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
    ) async throws -> ImportReport {
        let started = Date()
        var report = ImportReport()
        let settings: ImportSettings
        if let given = options.settings { settings = given } else { settings = try await importSettings() }
        report.settings = settings
        try await rememberRoots(paths, into: options.library)
        // First pass: count, for progress (directory entries and stat only; a file is opened
        // only when its extension says nothing).
        let total = AudioScanner.count(paths)
        var scanner = AudioScanner(paths)
        var listings = FolderListings()
        // Large groups (a genre of 50,000 tracks) are recomputed once per eighth of their size
        // instead of once per chunk, and exactly at the end, whether the import finished or not.
        try await deferMirrorGroups(true)
        do {
            try await importChunks(
                &scanner, options: options, settings: settings, roots: paths, total: total, started: started, listings: &listings,
                into: &report, progress: progress)
        } catch {
            try? await deferMirrorGroups(false)
            throw error
        }
        try await deferMirrorGroups(false)
        try await pruneArtistPictures()
        // Playlist files last, so that their entries find the tracks this import added.
        if !scanner.playlists.isEmpty {
            try Task.checkCancellation()
            try await importPlaylistFiles(scanner.playlists, roots: paths, into: &report)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Starts (`true`) or ends an import's deferral of the mirror's large groups.
    @LibraryActor
    private func deferMirrorGroups(_ on: Bool) async throws {
        let mirror = try await store().mirror
        if on { mirror?.beginDeferringGroups() } else { mirror?.endDeferringGroups() }
    }

    /// Reads and writes the scanner's files chunk by chunk.
    private func importChunks(
        _ scanner: inout AudioScanner, options: ImportOptions, settings: ImportSettings, roots paths: [URL], total: Int, started: Date,
        listings: inout FolderListings, into report: inout ImportReport, progress: @escaping @Sendable (ImportProgress) -> Void
    ) async throws {
        var done = 0
        while true {
            var chunk: [(URL, Int64, Date)] = []
            // Cut at `chunkBytes` too: what a chunk holds until its transaction follows its files' size.
            var bytes: Int64 = 0
            while chunk.count < max(1, options.chunkSize), bytes < max(1, options.chunkBytes), let file = scanner.next() {
                chunk.append((file.url, file.size, file.modified))
                bytes += file.size
            }
            report.failed += scanner.failures.map { ImportReport.Failure(path: $0.path, error: "\($0.path): \($0.reason)") }
            scanner.failures.removeAll()
            if chunk.isEmpty { break }
            try Task.checkCancellation()
            try await importChunk(chunk, options: options, settings: settings, roots: paths, listings: &listings, into: &report)
            done += chunk.count
            let rate = Double(done) / max(Date().timeIntervalSince(started), 1e-6)
            progress(
                ImportProgress(done: done, total: max(total, done), filesPerSecond: rate, secondsLeft: rate > 0 ? Double(max(0, total - done)) / rate : nil))
        }
    }

    private func importChunk(
        _ files: [(URL, Int64, Date)], options: ImportOptions, settings: ImportSettings, roots: [URL], listings: inout FolderListings,
        into report: inout ImportReport
    ) async throws {
        // Which paths are known, and unchanged (same size, modification time and files beside
        // them): skipped unread.
        let paths = files.map(\.0.path)
        let known: [String: KnownFile] = try await read { db in
            var known: [String: KnownFile] = [:]
            // A track marked missing is never "unchanged": its file is back, so it is read again
            // (which clears the mark), whatever its size and time.
            let statement = try db.cachedStatement(
                "SELECT id, file_size, file_modified, sidecars, compilation, album_artist, artist, missing_since, details FROM track WHERE path = ?")
            // An image split by its sheet is known by a present track of it (`IMAGE#NN`).
            let image = try db.cachedStatement(
                "SELECT id, file_size, file_modified, sidecars, compilation, album_artist, artist, missing_since, details FROM track "
                    + "WHERE path >= ? AND path < ? AND missing_since IS NULL LIMIT 1")
            func lookUp(_ statement: Statement, _ arguments: [String]) throws -> KnownFile? {
                try statement.bind(arguments)
                defer { statement.reset() }
                guard try statement.step() else { return nil }
                let row = statement.currentRow
                guard row.optionalDouble(7) == nil else { return nil }
                return KnownFile(
                    size: try row.int64(1), modified: row.optionalDouble(2), sidecars: row.optionalString(3) ?? "",
                    owner: try row.int64(4) != 0
                        ? nil
                        : ArtistPictures.owner(
                            albumArtist: row.optionalString(5), artist: row.optionalString(6),
                            ids: row.optionalString(8).map(TrackDetails.creditLists(encoded:)) ?? TrackDetails.CreditLists()))
            }
            for path in paths {
                var found = try lookUp(statement, [path])
                if found == nil, CueImages.imageExtensions.contains(AudioScanner.pathExtension(path)) {
                    found = try lookUp(image, [path + "#", path + "$"])
                }
                known[path] = found
            }
            return known
        }
        var toParse: [(URL, Int64, Date)] = []
        var stamps: [String: String] = [:]
        // The album folders of each credited owner in this chunk, for its `artist.*` picture.
        var owners = ArtistPictures.Owners()
        // Path strings, not URLs: an unchanged rescan does this per file, and URL's path and
        // parent each parse the URL again (a third of a 100,000-file rescan).
        for (file, path) in zip(files, paths) {
            let directory = FilePath.directory(of: path)
            let stamp = SidecarStamp.of(path: path, in: listings.of(path: directory), settings: settings)
            if let existing = known[path], existing.size == file.1,
                let stored = existing.modified, abs(stored - file.2.timeIntervalSince1970) < 0.000_5, existing.sidecars == stamp
            {
                report.unchanged += 1
                if let owner = existing.owner { owners.add(owner, folderPath: directory) }
            } else {
                toParse.append(file)
                stamps[path] = stamp
            }
        }
        var parsed = toParse.isEmpty ? [] : await Self.parse(toParse, separators: settings.separators)
        // What the files beside the audio give: the folder's picture (read once per folder) and
        // the lyrics file, before or after the file's own as the settings say.
        var folders: [String: Data?] = [:]
        var sheets: [String: CueImages.FolderSheets] = [:]
        for index in parsed.indices {
            parsed[index].sidecars = stamps[parsed[index].url.path] ?? ""
            guard case .success(let value) = parsed[index].result, let own = parsed[index].reading?.track else { continue }
            let directory = parsed[index].url.deletingLastPathComponent()
            let listing = listings.of(directory)
            if CueImages.imageExtensions.contains(AudioScanner.pathExtension(parsed[index].url.path)) {
                if sheets[directory.path] == nil {
                    let found = CueImages.sheets(in: listing)
                    sheets[directory.path] = found
                    report.warnings += found.problems
                }
                parsed[index].cue = CueImages.source(for: parsed[index].url, tags: value.0, in: listing, sheets: sheets[directory.path] ?? .init())
            }
            if settings.pictures == .files || value.0.picture == nil {
                if folders[directory.path] == nil {
                    let found = PictureFiles.album.find(in: listing)
                    folders[directory.path] = .some(found.picture?.data)
                    report.warnings += found.problems
                }
                parsed[index].folderPicture = folders[directory.path] ?? nil
            }
            // The file beside is read when it may be the track's lyrics, and when the tags hold
            // lyrics too, as one more text to offer (`LyricsText`).
            if settings.lyrics == .files || SortKey.isBlank(own.lyrics) || !value.0.embeddedLyrics.isEmpty {
                let found = LyricsFile.find(beside: parsed[index].url, in: listing)
                parsed[index].lyricsFile = found.text
                if let problem = found.problem { report.warnings.append(problem) }
            }
            if !own.compilation, let owner = ArtistPictures.owner(albumArtist: own.albumArtist, artist: own.artist, ids: own.details.creditLists) {
                owners.add(owner, folder: directory)
            }
        }
        let artistPictures = try await ArtistPictures.changes(for: owners, roots: roots, listings: &listings, in: self)
        report.warnings += artistPictures.problems
        if parsed.isEmpty && artistPictures.isEmpty { return }
        let outcome: ImportReport = try await write { batch in
            var outcome = ImportReport()
            for file in parsed {
                let path = file.url.path
                let tags: AudioFileTags
                let identity: String
                let legacyIdentity: String?
                switch file.result {
                case .failure(let failure):
                    outcome.failed.append(.init(path: path, error: failure.message))
                    continue
                case .success(let value): (tags, identity, legacyIdentity) = value
                }
                var (track, problems) = file.reading ?? tags.reading(path: path, separators: settings.separators)
                outcome.warnings += problems.map { .init(path: path, error: "\(path): \($0)") }
                track.fileSize = file.size
                track.fileModified = file.modified
                track.audioHash = identity
                let picture = settings.pictures == .files ? file.folderPicture ?? tags.picture : tags.picture ?? file.folderPicture
                if let picture { track.artworkID = try batch.addArtwork(picture) }
                if let lyrics = file.lyricsFile, settings.lyrics == .files || SortKey.isBlank(track.lyrics) { track.lyrics = lyrics }
                let cut = file.cue.map { CueImages.tracks(of: track, source: $0, duration: track.duration) } ?? []
                let entries = cut.isEmpty ? [track] : cut
                if CueImages.imageExtensions.contains(AudioScanner.pathExtension(path)) {
                    try Self.reconcileImage(path, entries: cut, in: batch)
                }
                for entry in entries {
                    var track = entry
                    let path = entry.path
                    let identity = entry.audioHash ?? identity
                    let id: TrackID
                    if let existingID = try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [path]) {
                        id = TrackID(existingID)
                        try Self.replace(id, with: track, in: batch)
                        outcome.updated += 1
                    } else {
                        var known = identity
                        var sameAudio = try batch.db.query("SELECT id, path FROM track WHERE audio_hash = ? ORDER BY id", [known]) {
                            (TrackID(try $0.int64(0)), try $0.string(1))
                        }
                        // An Ogg file stored under its identity before header pages were told
                        // from audio (see `AudioIdentity.legacyOggIdentity`): a move is still a move.
                        if sameAudio.isEmpty, cut.isEmpty, let legacy = legacyIdentity {
                            known = legacy
                            sameAudio = try batch.db.query("SELECT id, path FROM track WHERE audio_hash = ? ORDER BY id", [known]) {
                                (TrackID(try $0.int64(0)), try $0.string(1))
                            }
                        }
                        // A track marked missing is the likeliest owner; then any whose file is gone.
                        let missingIDs = try Set(
                            batch.db.query(
                                "SELECT id FROM track WHERE audio_hash = ? AND missing_since IS NOT NULL", [known]
                            ) { try $0.int64(0) })
                        if let gone = sameAudio.first(where: { missingIDs.contains($0.0.rawValue) })
                            ?? sameAudio.first(where: { !Library.fileOnDisk($0.1) })
                        {
                            id = gone.0
                            try Self.replace(id, with: track, in: batch)
                            outcome.moved += 1
                        } else if let present = sameAudio.first, !options.importDuplicates {
                            outcome.duplicates.append(.init(path: path, existing: present.1))
                            continue
                        } else {
                            track.dateAdded = batch.now
                            id = try batch.insert(track)
                            outcome.added += 1
                        }
                    }
                    // Bookkeeping of the import, not of the track: no change is recorded for it.
                    try batch.db.execute("UPDATE track SET sidecars = ? WHERE id = ?", [file.sidecars.isEmpty ? nil : file.sidecars, id.rawValue])
                    try batch.setLyricsTexts(id, cut.isEmpty ? Self.lyricsTexts(tags, file: file.lyricsFile, shown: track.lyrics) : [])
                }
            }
            try artistPictures.apply(in: batch)
            return outcome
        }
        report.added += outcome.added
        report.updated += outcome.updated
        report.moved += outcome.moved
        report.duplicates += outcome.duplicates
        report.failed += outcome.failed
        report.warnings += outcome.warnings
        report.commits += 1
    }

    /// Every lyrics text a file offers, the one its track shows first: each of its tags' texts,
    /// then the file beside it, each text once. None when the shown text is all there is and has
    /// no language (most files: nothing to keep beyond the track's `lyrics`).
    static func lyricsTexts(_ tags: AudioFileTags, file: String?, shown: String?) -> [LyricsText] {
        let all = tags.embeddedLyrics + (file.map { [LyricsText(lang: "", source: "file", text: $0)] } ?? [])
        var seen = Set<String>()
        var texts: [LyricsText] = []
        if let shown { texts.append(all.first { $0.text == shown } ?? LyricsText(lang: "", source: "embedded", text: shown)) }
        for text in all where seen.insert(text.text).inserted && text.text != shown { texts.append(text) }
        return texts.count == 1 && texts[0].lang.isEmpty ? [] : texts
    }

    /// Brings an image's stored tracks in line with how it is read now (`entries`: its sheet's
    /// tracks, empty when it has no sheet). Nothing is deleted: a track the sheet no longer has,
    /// the sheet's tracks when the sheet is gone, or the whole-image track beside a sheet's tracks
    /// is marked missing (kept with its statistics and playlist places until pruned). A track of
    /// the whole image imported before its sheet was there becomes the sheet's track 1.
    @LibraryActor
    private static func reconcileImage(_ path: String, entries: [Track], in batch: WriteBatch) throws {
        let kept = Set(entries.map(\.path))
        let cut = try batch.db.query("SELECT id, path FROM track WHERE path >= ? AND path < ? AND missing_since IS NULL", [path + "#", path + "$"]) {
            (TrackID(try $0.int64(0)), try $0.string(1))
        }
        var gone = cut.filter { !kept.contains($0.1) }.map(\.0)
        if !entries.isEmpty, let whole = try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ? AND missing_since IS NULL", [path]) {
            let first = entries.first { $0.trackNumber == 1 } ?? entries[0]
            if try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [first.path]) == nil {
                try replace(TrackID(whole), with: first, in: batch)
            } else {
                gone.append(TrackID(whole))
            }
        }
        for id in gone { try batch.updateTrack(id) { $0.missingSince = batch.now } }
    }

    /// Stores the file's values on an existing track, keeping what belongs to the track rather
    /// than the file: its ID, when it was added, play statistics and rating.
    @LibraryActor
    private static func replace(_ id: TrackID, with file: Track, in batch: WriteBatch) throws {
        guard let old = try batch.track(id) else { throw LibraryError.trackNotFound(id) }
        var track = file
        track.id = id
        track.dateAdded = old.dateAdded
        track.playCount = old.playCount
        track.skipCount = old.skipCount
        track.lastPlayed = old.lastPlayed
        track.rating = old.rating
        try batch.update(track)
    }

    /// Tags and audio identity of each file, on every core, off the actor and the cooperative pool.
    private static func parse(_ files: [(URL, Int64, Date)], separators: TagSeparators) async -> [ParsedFile] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                // One file per part: files differ widely in cost, so small parts balance the cores.
                let results = parallelMap(Array(files.indices), maximumParts: files.count) { index -> ParsedFile in
                    let (url, size, modified) = files[index]
                    let result: Result<(AudioFileTags, String, String?), TagReadFailure>
                    do {
                        result = .success(try AudioFile.readForImport(url))
                    } catch let error as TagError {
                        result = .failure(TagReadFailure(message: error.description))
                    } catch let error as FFprobeError {
                        result = .failure(TagReadFailure(message: "cannot read \(url.path): \(error)"))
                    } catch {
                        result = .failure(TagReadFailure(message: "cannot read \(url.path): \(error.localizedDescription)"))
                    }
                    var file = ParsedFile(url: url, size: size, modified: modified, result: result)
                    if case .success(let value) = result { file.reading = value.0.reading(path: url.path, separators: separators) }
                    return file
                }
                continuation.resume(returning: results)
            }
        }
    }
}
