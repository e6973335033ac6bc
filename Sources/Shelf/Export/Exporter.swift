import Foundation
import Glibc
import ShelfCore

/// The formats an export writes.
public enum ExportFormat: String, Sendable, Codable, CaseIterable {
    /// The file as it is (its tags rewritten from the library).
    case copy
    case flac, wav, mp3
    /// AAC in an MP4 (.m4a) container.
    case m4a
    case opus

    /// The extension of an exported file (`copy` keeps the source's).
    func fileExtension(source: String) -> String {
        switch self {
        case .copy: URL(fileURLWithPath: source).pathExtension.lowercased()
        case .flac: "flac"
        case .wav: "wav"
        case .mp3: "mp3"
        case .m4a: "m4a"
        case .opus: "opus"
        }
    }
}

/// How an export renders, names and registers its files.
public struct ExportOptions: Sendable {
    public var format: ExportFormat
    /// kbit/s for MP3, AAC and Opus (192 unless said).
    public var bitrate: Int?
    public var sampleRate: Int?
    public var channels: Int?
    /// Where a file goes under the target directory; each `{field}` is sanitized on its own.
    /// Fields: title, artist, album, albumArtist, genre, year, disc, track, ext.
    public var template: String
    /// Replace an existing file of the same name (never done unless asked).
    public var overwrite: Bool
    /// The ffmpeg executable (found on PATH when nil).
    public var ffmpegPath: String?

    public static let defaultTemplate = "{albumArtist}/{album}/{disc}-{track} {title}.{ext}"

    /// Options for `format`, the default template, no overwriting.
    public init(
        format: ExportFormat, bitrate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil,
        template: String = ExportOptions.defaultTemplate, overwrite: Bool = false, ffmpegPath: String? = nil
    ) {
        self.format = format
        self.bitrate = bitrate
        self.sampleRate = sampleRate
        self.channels = channels
        self.template = template
        self.overwrite = overwrite
        self.ffmpegPath = ffmpegPath
    }
}

/// The outcome of an export, item by item.
public struct ExportResult: Sendable, Equatable {
    /// A file written and registered as a new track.
    public struct Exported: Sendable, Equatable, Codable {
        public var source: TrackID
        public var path: String
        public var track: TrackID?
    }
    public var exported: [Exported] = []
    public var skipped: [EditResult.Skipped] = []
    public var failed: [EditResult.Failed] = []
}

/// Why an export cannot start at all.
public struct ExportError: ClassifiedError, Equatable {
    /// A conversion that failed on this machine.
    public var kind: ErrorKind { .internal }
    /// "exportFailed".
    public var errorCode: String { "exportFailed" }
    public var message: String
    public var description: String { message }
}

/// Builds export file names from a template, each field made safe on its own: no path
/// separators, no `.`/`..`, no control characters, at most 120 bytes; blank becomes "Unknown".
public enum ExportNaming {
    /// The relative path for a track; nil when the template itself would leave the directory.
    public static func relativePath(_ template: String, track: Track, ext: String) -> String? {
        func two(_ n: Int?) -> String { n.map { String(format: "%02d", $0) } ?? "00" }
        let fields: [String: String] = [
            "title": component(track.title), "artist": component(track.artist), "album": component(track.album),
            "albumArtist": component(track.albumArtist ?? track.artist), "genre": component(track.genre),
            "year": track.year.map(String.init) ?? "0000", "disc": String(track.discNumber ?? 1), "track": two(track.trackNumber),
            "ext": component(ext),
        ]
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = String(rest[rest.index(after: open)..<close])
            result += fields[name] ?? component(name)
            rest = rest[rest.index(after: close)...]
        }
        result += rest
        let parts = result.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }), !result.hasPrefix("/") else { return nil }
        return parts.joined(separator: "/")
    }

    /// One field made safe as (part of) a single path component.
    public static func component(_ value: String?) -> String {
        var text = String(
            String.UnicodeScalarView(
                (value ?? "").unicodeScalars.compactMap { scalar -> Unicode.Scalar? in
                    if scalar == "/" || scalar == "\\" { return "_" }
                    if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format { return nil }
                    return scalar
                }))
        text = text.trimmingCharacters(in: .whitespaces)
        while text.hasPrefix(".") { text.removeFirst() }
        while text.utf8.count > 120 { text.removeLast() }
        text = text.trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? "Unknown" : text
    }
}

extension Library {
    /// Exports tracks to `directory` in `options.format`: for each track the metadata is fixed
    /// first, then its picture is read (through `loader`); a cancellation, the track's deletion or
    /// a failed picture read stops that track before anything is rendered. The file is rendered
    /// by ffmpeg to a hidden temporary name, tagged from the fixed metadata, and renamed into
    /// place (never over an existing file unless `overwrite`); then every exported file is
    /// registered as a new track through the import path. Renders run one per core.
    public func export(
        _ ids: [TrackID], to directory: URL, options: ExportOptions, loader: ArtworkLoader? = nil,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws -> ExportResult {
        let ffmpeg = try options.format == .copy ? nil : Self.findFFmpeg(options.ffmpegPath)
        if options.format == .opus, let rate = options.sampleRate, ![8_000, 12_000, 16_000, 24_000, 48_000].contains(rate) {
            throw ExportError(message: "Opus supports sample rates of 8000, 12000, 16000, 24000 and 48000 Hz, not \(rate)")
        }
        if let bitrate = options.bitrate, !(8...640).contains(bitrate) { throw ExportError(message: "bitrate must be 8…640 kbit/s, got \(bitrate)") }
        if let channels = options.channels, !(1...8).contains(channels) { throw ExportError(message: "channels must be 1…8, got \(channels)") }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ExportError(message: "cannot create \(directory.path): \(error.localizedDescription)")
        }
        let loader = loader ?? artwork
        var result = ExportResult()
        var written: [(source: TrackID, path: String)] = []
        var done = 0
        try await withThrowingTaskGroup(of: (TrackID, Outcome).self) { group in
            var next = 0
            func startNext() {
                guard next < ids.count else { return }
                let id = ids[next]
                next += 1
                group.addTask { (id, await self.exportOne(id, to: directory, options: options, ffmpeg: ffmpeg, loader: loader)) }
            }
            for _ in 0..<max(1, ProcessInfo.processInfo.activeProcessorCount) { startNext() }
            while let (id, outcome) = try await group.next() {
                switch outcome {
                case .written(let path): written.append((id, path))
                case .skipped(let reason): result.skipped.append(EditResult.Skipped(id: id, reason: reason))
                case .failed(let path, let error): result.failed.append(EditResult.Failed(id: id, path: path, error: error))
                }
                done += 1
                progress(done, ids.count)
                startNext()
            }
        }
        guard !written.isEmpty else { return result }
        // Registered through the import path; an exported copy holds the same audio as its
        // source, which import would otherwise only report as a duplicate.
        _ = try await importFiles(at: written.map { URL(fileURLWithPath: $0.path) }, options: ImportOptions(importDuplicates: true))
        let paths = written.map(\.path)
        let registered = try await read { db in
            try db.query("SELECT path, id FROM track WHERE path IN (\(paths.map { _ in "?" }.joined(separator: ", ")))", paths) {
                (try $0.string(0), TrackID(try $0.int64(1)))
            }
        }
        let byPath = Dictionary(registered, uniquingKeysWith: { first, _ in first })
        result.exported = written.map { ExportResult.Exported(source: $0.source, path: $0.path, track: byPath[$0.path]) }
        return result
    }

    enum Outcome: Sendable {
        case written(String)
        case skipped(String)
        case failed(path: String, error: String)
    }

    private func exportOne(_ id: TrackID, to directory: URL, options: ExportOptions, ffmpeg: String?, loader: ArtworkLoader) async -> Outcome {
        if Task.isCancelled { return .skipped("cancelled") }
        // The metadata is fixed here, before the picture is read: an edit landing during the
        // read does not reach this export.
        guard let fixed = try? await track(id) else { return .skipped("no such track") }
        var picture: Data?
        if let artworkID = fixed.artworkID {
            do {
                picture = try await loader.pictureData(for: ArtworkRequest(trackID: id, artworkID: artworkID))
            } catch is CancellationError {
                return .skipped(Task.isCancelled ? "cancelled" : "the track or its picture changed while it was read")
            } catch {
                return .failed(path: fixed.path, error: "cannot read its picture: \(error)")
            }
        }
        if Task.isCancelled { return .skipped("cancelled") }
        // A track cut from an image by its CUE sheet is rendered from its slice; "copy" keeps the
        // image's audio losslessly (as WAV from a WAV image, else FLAC).
        let slice = fixed.details.cue.map { (start: $0.start, end: $0.end) }
        var options = options
        if slice != nil, options.format == .copy { options.format = AudioScanner.pathExtension(fixed.filePath).hasPrefix("wav") ? .wav : .flac }
        var ffmpeg = ffmpeg
        if slice != nil, ffmpeg == nil {
            do { ffmpeg = try Self.findFFmpeg(options.ffmpegPath) } catch { return .failed(path: fixed.path, error: "\(error)") }
        }
        let ext = options.format.fileExtension(source: fixed.filePath)
        guard let relative = ExportNaming.relativePath(options.template, track: fixed, ext: ext) else {
            return .failed(path: fixed.path, error: "the template '\(options.template)' leaves the target directory")
        }
        let destination = directory.appendingPathComponent(relative)
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            if !options.overwrite, FileManager.default.fileExists(atPath: destination.path) {
                return .failed(path: fixed.path, error: "\(destination.path) exists (ask to overwrite)")
            }
            let temporary = AtomicRewrite.temporaryURL(for: destination)
            defer { unlink(temporary.path) }
            if let ffmpeg {
                try await Self.render(fixed.filePath, to: temporary.path, options: options, ffmpeg: ffmpeg, slice: slice)
            } else {
                try FileManager.default.copyItem(atPath: fixed.filePath, toPath: temporary.path)
            }
            // Every tag from the library, then what no edit sets (MusicBrainz IDs, ReplayGain, roles,
            // release details); a format that cannot hold one of these keeps the rest.
            try TagFile.write(temporary, MetadataChanges.allFields.fileProperties(of: fixed))
            let details = MetadataChanges.detailProperties(of: fixed)
            if !details.isEmpty {
                do { try TagFile.write(temporary, details) } catch { try TagFile.write(temporary, details.filter { !$0.key.hasPrefix("PERFORMER") }) }
            }
            try TagFile.writePicture(
                temporary, picture, mimeType: picture.map(ImageCodec.mimeType(of:)) ?? "image/jpeg")
            if Task.isCancelled { return .skipped("cancelled") }
            // link() refuses an existing name, so a file that appeared meanwhile is not replaced.
            if options.overwrite {
                guard rename(temporary.path, destination.path) == 0 else { throw ExportError(message: String(cString: strerror(errno))) }
            } else {
                guard link(temporary.path, destination.path) == 0 else {
                    throw ExportError(message: "\(destination.path): \(String(cString: strerror(errno)))")
                }
            }
            return .written(destination.path)
        } catch is CancellationError {
            return .skipped("cancelled")
        } catch {
            return .failed(path: fixed.path, error: "\(error)")
        }
    }

    /// The ffmpeg executable at `path`, or the first on PATH; a typed error saying how to install it.
    public static func findFFmpeg(_ path: String? = nil) throws -> String {
        try ProgramRunner.locate(.ffmpeg, path: path)
    }

    /// Runs ffmpeg on the source's first audio stream with no metadata carried over (the tags
    /// are written afterwards from the library); a cancelled task terminates it.
    static func render(
        _ source: String, to destination: String, options: ExportOptions, ffmpeg: String, slice: (start: Double, end: Double?)? = nil
    ) async throws {
        var arguments = ["-nostdin", "-hide_banner", "-v", "error", "-y"]
        if let slice {
            arguments += ["-ss", String(format: "%.6f", slice.start)]
            if let end = slice.end { arguments += ["-t", String(format: "%.6f", max(0, end - slice.start))] }
        }
        arguments += ["-i", source, "-map", "0:a:0", "-map_metadata", "-1", "-vn"]
        let bitrate = "\(options.bitrate ?? 192)k"
        switch options.format {
        case .copy: break
        case .flac: arguments += ["-c:a", "flac"]
        case .wav: arguments += ["-c:a", "pcm_s16le"]
        case .mp3: arguments += ["-c:a", "libmp3lame", "-b:a", bitrate]
        case .m4a: arguments += ["-c:a", "aac", "-b:a", bitrate]
        case .opus: arguments += ["-c:a", "libopus", "-b:a", bitrate]
        }
        if let rate = options.sampleRate { arguments += ["-ar", String(rate)] }
        if let channels = options.channels { arguments += ["-ac", String(channels)] }
        arguments.append(destination)
        let finished = try await ProgramRunner.run(ffmpeg, arguments)
        try Task.checkCancellation()
        guard finished.succeeded else {
            throw ExportError(message: "ffmpeg failed (\(finished.status)): \(finished.lastErrorLine ?? "")")
        }
    }
}

extension MetadataChanges {
    /// Changes naming every field (their values are ignored by `fileProperties`): an export
    /// writes every tag from the library.
    static let allFields = MetadataChanges(Dictionary(uniqueKeysWithValues: EditableField.allCases.map { ($0, String?.none) }))
}
