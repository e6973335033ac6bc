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
    /// Import files whose audio is already in the library (by default they are only reported).
    public var importDuplicates: Bool
    /// How single-value tags split into lists (`ARTIST=A; B`).
    public var separators: TagSeparators

    /// Chunks of 500 files; duplicates reported, not imported; the standard separators.
    public init(chunkSize: Int = 500, importDuplicates: Bool = false, separators: TagSeparators = .standard) {
        self.chunkSize = chunkSize
        self.importDuplicates = importDuplicates
        self.separators = separators
    }
}

/// One file as read off the disk before its chunk's transaction.
struct ParsedFile: Sendable {
    let url: URL
    let size: Int64
    let modified: Date
    let result: Result<(AudioFileTags, String), TagReadFailure>
    /// The album folder's picture, for a file without one of its own.
    var folderPicture: Data?
    /// The lyrics file beside it, for a file without lyrics of its own.
    var lyricsFile: String?
}

/// Lyrics beside the audio: `NAME.lrc` (synced, LRC) else `NAME.txt` (plain) next to `NAME.flac`,
/// for a file without embedded lyrics (the file's own come first). UTF-8, a BOM dropped, at
/// most 1 MiB; one that is not UTF-8 is reported and left out.
enum LyricsFile {
    static let extensions = ["lrc", "LRC", "txt", "TXT"]
    static let maxBytes = 1 << 20

    /// The text of the lyrics file beside `audio`, and what was wrong with one passed over.
    static func find(beside audio: URL) -> (text: String?, problem: ImportReport.Failure?) {
        let stem = audio.deletingPathExtension()
        for ext in extensions {
            let path = stem.appendingPathExtension(ext).path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            guard let data = FileManager.default.contents(atPath: path), data.count <= maxBytes else {
                return (nil, .init(path: path, error: "\(path): lyrics file unreadable or over \(maxBytes) bytes; left out"))
            }
            let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
            guard let text = String(data: Data(body), encoding: .utf8) else {
                return (nil, .init(path: path, error: "\(path): lyrics file is not UTF-8; left out"))
            }
            return (SortKey.isBlank(text) ? nil : text, nil)
        }
        return (nil, nil)
    }
}

/// Pictures beside the audio: an album folder's `cover.*`, `folder.*`, `front.*` or `album.*`
/// (JPEG or PNG, names in any case), the first in that order that is a picture within the
/// decoder's limits. A file's own embedded picture comes first; the folder's stands in for it.
enum FolderPicture {
    static let names = ["cover", "folder", "front", "album"]
    static let extensions = ["jpg", "jpeg", "png"]
    /// Larger files are not album pictures anyone meant to serve.
    static let maxBytes = 32 << 20

    /// The picture of `directory`, and what was wrong with the candidates passed over.
    static func find(in directory: URL) -> (picture: Data?, problems: [ImportReport.Failure]) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return (nil, []) }
        func rank(_ entry: String) -> Int? {
            let url = URL(fileURLWithPath: entry)
            guard let name = names.firstIndex(of: url.deletingPathExtension().lastPathComponent.lowercased()),
                  let ext = extensions.firstIndex(of: url.pathExtension.lowercased()) else { return nil }
            return name * extensions.count + ext
        }
        var problems: [ImportReport.Failure] = []
        for entry in entries.compactMap({ e in rank(e).map { (e, $0) } }).sorted(by: { $0.1 < $1.1 }).map(\.0) {
            let path = directory.appendingPathComponent(entry).path
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  (attributes[.type] as? FileAttributeType) == .typeRegular else { continue }
            if let size = attributes[.size] as? Int, size > maxBytes {
                problems.append(.init(path: path, error: "\(path): folder picture of \(size) bytes is beyond \(maxBytes); left out"))
                continue
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                problems.append(.init(path: path, error: "\(path): folder picture cannot be read; left out"))
                continue
            }
            do throws(ImageError) {
                let size = try ImageCodec.dimensions(of: data)
                let limits = ImageLimits()
                guard size.width <= limits.maxSide, size.height <= limits.maxSide, size.width * size.height <= limits.maxPixels else {
                    throw ImageError.tooLarge(width: size.width, height: size.height, limits: limits)
                }
                return (data, problems)
            } catch {
                problems.append(.init(path: path, error: "\(path): folder picture left out: \(error)"))
            }
        }
        return (nil, problems)
    }
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
        // First pass: count, for progress (directory entries and stat only; a file is opened
        // only when its extension says nothing).
        let total = AudioScanner.count(paths)
        var scanner = AudioScanner(paths)
        var done = 0
        while true {
            var chunk: [(URL, Int64, Date)] = []
            while chunk.count < max(1, options.chunkSize), let file = scanner.next() { chunk.append((file.url, file.size, file.modified)) }
            report.failed += scanner.failures.map { ImportReport.Failure(path: $0.path, error: "\($0.path): \($0.reason)") }
            scanner.failures.removeAll()
            if chunk.isEmpty { break }
            try Task.checkCancellation()
            try await importChunk(chunk, options: options, into: &report)
            done += chunk.count
            let rate = Double(done) / max(Date().timeIntervalSince(started), 1e-6)
            progress(ImportProgress(done: done, total: max(total, done), filesPerSecond: rate, secondsLeft: rate > 0 ? Double(max(0, total - done)) / rate : nil))
        }
        // Playlist files last, so that their entries find the tracks this import added.
        if !scanner.playlists.isEmpty {
            try Task.checkCancellation()
            try await importPlaylistFiles(scanner.playlists, roots: paths, into: &report)
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    private func importChunk(_ files: [(URL, Int64, Date)], options: ImportOptions, into report: inout ImportReport) async throws {
        // Which paths are known, and unchanged (same size and modification time): skipped unread.
        let paths = files.map(\.0.path)
        let known: [String: (id: Int64, size: Int64, modified: Double?)] = try await read { db in
            var known: [String: (Int64, Int64, Double?)] = [:]
            let statement = try db.cachedStatement("SELECT id, file_size, file_modified FROM track WHERE path = ?")
            for path in paths {
                try statement.bind([path])
                if try statement.step() {
                    known[path] = (try statement.currentRow.int64(0), try statement.currentRow.int64(1), statement.currentRow.optionalDouble(2))
                }
                statement.reset()
            }
            return known
        }
        var toParse: [(URL, Int64, Date)] = []
        for file in files {
            if let existing = known[file.0.path], existing.size == file.1,
               let stored = existing.modified, abs(stored - file.2.timeIntervalSince1970) < 0.000_5 {
                report.unchanged += 1
            } else {
                toParse.append(file)
            }
        }
        guard !toParse.isEmpty else { return }
        var parsed = await Self.parse(toParse)
        // What the files beside the audio give a file without its own: the folder's picture (read
        // once per folder) and the lyrics file.
        var folders: [String: Data?] = [:]
        for index in parsed.indices {
            guard case .success(let value) = parsed[index].result else { continue }
            if value.0.picture == nil {
                let directory = parsed[index].url.deletingLastPathComponent()
                if folders[directory.path] == nil {
                    let found = FolderPicture.find(in: directory)
                    folders[directory.path] = .some(found.picture)
                    report.warnings += found.problems
                }
                parsed[index].folderPicture = folders[directory.path] ?? nil
            }
            if SortKey.isBlank(value.0.track(path: "").lyrics) {
                let found = LyricsFile.find(beside: parsed[index].url)
                parsed[index].lyricsFile = found.text
                if let problem = found.problem { report.warnings.append(problem) }
            }
        }
        let options = options
        let outcome: ImportReport = try await write { batch in
            var outcome = ImportReport()
            for file in parsed {
                let path = file.url.path
                let tags: AudioFileTags
                let identity: String
                switch file.result {
                case .failure(let failure):
                    outcome.failed.append(.init(path: path, error: failure.message))
                    continue
                case .success(let value): (tags, identity) = value
                }
                var (track, problems) = tags.reading(path: path, separators: options.separators)
                outcome.warnings += problems.map { .init(path: path, error: "\(path): \($0)") }
                track.fileSize = file.size
                track.fileModified = file.modified
                track.audioHash = identity
                if let picture = tags.picture ?? file.folderPicture { track.artworkID = try batch.addArtwork(picture) }
                if let lyrics = file.lyricsFile { track.lyrics = lyrics }
                if let existingID = try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [path]) {
                    try Self.replace(TrackID(existingID), with: track, in: batch)
                    outcome.updated += 1
                    continue
                }
                let sameAudio = try batch.db.query("SELECT id, path FROM track WHERE audio_hash = ? ORDER BY id", [identity]) {
                    (TrackID(try $0.int64(0)), try $0.string(1))
                }
                if let gone = sameAudio.first(where: { !FileManager.default.fileExists(atPath: $0.1) }) {
                    try Self.replace(gone.0, with: track, in: batch)
                    outcome.moved += 1
                    continue
                }
                if let present = sameAudio.first, !options.importDuplicates {
                    outcome.duplicates.append(.init(path: path, existing: present.1))
                    continue
                }
                track.dateAdded = batch.now
                try batch.insert(track)
                outcome.added += 1
            }
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
    private static func parse(_ files: [(URL, Int64, Date)]) async -> [ParsedFile] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                // One file per part: files differ widely in cost, so small parts balance the cores.
                let results = parallelMap(Array(files.indices), maximumParts: files.count) { index -> ParsedFile in
                    let (url, size, modified) = files[index]
                    let result: Result<(AudioFileTags, String), TagReadFailure>
                    do {
                        result = .success(try AudioFile.read(url))
                    } catch let error as TagError {
                        result = .failure(TagReadFailure(message: error.description))
                    } catch let error as FFprobeError {
                        result = .failure(TagReadFailure(message: "cannot read \(url.path): \(error)"))
                    } catch {
                        result = .failure(TagReadFailure(message: "cannot read \(url.path): \(error.localizedDescription)"))
                    }
                    return ParsedFile(url: url, size: size, modified: modified, result: result)
                }
                continuation.resume(returning: results)
            }
        }
    }

    /// Tracks whose files are gone; with `remove`, they are deleted (one transaction).
    public func missingFiles(remove: Bool = false) async throws -> [(id: TrackID, path: String)] {
        let all = try await read { db in try db.query("SELECT id, path FROM track ORDER BY id", []) { (TrackID(try $0.int64(0)), try $0.string(1)) } }
        let missing = all.filter { !FileManager.default.fileExists(atPath: $0.1) }
        if remove, !missing.isEmpty {
            try await write { batch in for (id, _) in missing { try batch.deleteTrack(id) } }
        }
        return missing.map { (id: $0.0, path: $0.1) }
    }
}
