import Foundation
import Shelf
import ShelfCore

/// Audio over HTTP, only ever by track ID (a path never comes from a request): the file itself
/// with byte ranges, sent from its descriptor without reading it into memory, or a transcode
/// through ffmpeg streamed as it is produced, with at most `maxTranscodes` running at once.
public final class StreamResponder: Sendable {
    /// The formats a transcode can produce.
    public enum TranscodeFormat: String, Sendable, CaseIterable {
        case opus, mp3, aac, flac

        var mime: String {
            switch self {
            case .opus: "audio/ogg"
            case .mp3: "audio/mpeg"
            case .aac: "audio/aac"
            case .flac: "audio/flac"
            }
        }

        func arguments(bitRate: Int) -> [String] {
            switch self {
            case .opus: ["-c:a", "libopus", "-b:a", "\(bitRate)k", "-f", "ogg"]
            case .mp3: ["-c:a", "libmp3lame", "-b:a", "\(bitRate)k", "-f", "mp3"]
            case .aac: ["-c:a", "aac", "-b:a", "\(bitRate)k", "-f", "adts"]
            case .flac: ["-c:a", "flac", "-f", "flac"]
            }
        }
    }

    private let library: Library
    /// Transcodes allowed at once (changed by `configure`, on SIGHUP).
    public var maxTranscodes: Int { settings.withLock { $0.maxTranscodes } }
    /// Named transcodes (the config's `[presets]`) that `format=NAME` asks for.
    public var presets: [String: TranscodePreset] { settings.withLock { $0.presets } }
    private let settings: Locked<(maxTranscodes: Int, presets: [String: TranscodePreset])>
    private let running = Locked(0)
    private let ffmpegPath: String?

    /// A responder over `library`'s files allowing `maxTranscodes` ffmpeg processes at once.
    public init(library: Library, maxTranscodes: Int = ProcessInfo.processInfo.activeProcessorCount, ffmpegPath: String? = nil) {
        self.library = library
        settings = Locked((max(1, maxTranscodes), [:]))
        self.ffmpegPath = ffmpegPath
    }

    /// Sets the transcode limit (transcodes already running above it finish) and the presets.
    public func configure(maxTranscodes: Int, presets: [String: TranscodePreset]) {
        settings.withLock { $0 = (max(1, maxTranscodes), presets) }
    }

    /// Transcodes running now.
    public var activeTranscodes: Int { running.withLock { $0 } }

    /// The MIME type of a file by its codec or extension.
    static func mimeType(path: String, codec: String?) -> String {
        mimeType(suffix: fileSuffix(path), codec: codec)
    }

    /// The lowercased extension of a path's last component ("" without one), found by hand:
    /// NSString's `pathExtension` normalises the whole path first, a tenth of a sync page's cost.
    static func fileSuffix(_ path: String) -> String {
        let utf8 = path.utf8
        guard let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return "" }
        if let slash = utf8.lastIndex(of: UInt8(ascii: "/")), slash > dot { return "" }
        if dot == utf8.startIndex || utf8[utf8.index(before: dot)] == UInt8(ascii: "/") { return "" }
        return String(path[path.index(after: dot)...]).lowercased()
    }

    /// The type of a file with extension `suffix` (lowercased) and `codec`.
    static func mimeType(suffix: String, codec: String?) -> String {
        switch (codec?.lowercased(), suffix) {
        case (_, "flac"), ("flac", _): "audio/flac"
        case (_, "mp3"), ("mp3", _): "audio/mpeg"
        case (_, "m4a"), (_, "mp4"), (_, "aac"), ("aac", _), ("alac", _): "audio/mp4"
        case (_, "ogg"), (_, "oga"), (_, "opus"), ("opus", _), ("vorbis", _): "audio/ogg"
        case (_, "wav"): "audio/wav"
        case (_, "aif"), (_, "aiff"): "audio/aiff"
        case (_, "wv"): "audio/x-wavpack"
        case (_, "ape"): "audio/x-ape"
        case (_, "wma"): "audio/x-ms-wma"
        case (_, "tta"): "audio/x-tta"
        default: "application/octet-stream"
        }
    }

    /// A byte range request resolved against a file of `size` bytes.
    enum RangeAnswer: Equatable {
        case whole
        case partial(start: UInt64, end: UInt64)
        case unsatisfiable
    }

    /// Parses `Range: bytes=…`. One range is answered with 206; several (which players do not
    /// send) with the whole file, which RFC 9110 allows; a malformed header is ignored.
    static func range(_ header: String?, size: UInt64) -> RangeAnswer {
        guard let header, header.lowercased().hasPrefix("bytes=") else { return .whole }
        let specs = header.dropFirst(6).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = UInt64(last), suffix > 0 else { return last.isEmpty ? .whole : .unsatisfiable }
            guard size > 0 else { return .unsatisfiable }
            return .partial(start: size - min(suffix, size), end: size - 1)
        }
        guard let start = UInt64(first) else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .partial(start: start, end: size - 1) }
        guard let end = UInt64(last), end >= start else { return .whole }
        return .partial(start: start, end: min(end, size - 1))
    }

    /// What a stream is made from: a track's file, or another file the server keeps (a podcast
    /// episode), named by the server, never by a request.
    public struct Source: Sendable {
        public var path: String
        public var codec: String?
        /// Seconds, for the estimated length of a transcode.
        public var duration: Double?
        /// Names the source in messages and ETags (`7` for a track, `pe-3` for an episode).
        public var name: String
        /// What is known of the audio (kbit/s, channels, Hz, bits), for the decisions of whether to transcode.
        public var bitRate: Int?
        public var channels: Int?
        public var sampleRate: Int?
        public var bitDepth: Int?
        /// The slice of the file that is the track (a CUE sheet's track in an audio image): start
        /// and end in seconds (nil end: the file's end); nil for the whole file.
        public var slice: (start: Double, end: Double?)?

        /// A source from its parts.
        public init(
            path: String, codec: String?, duration: Double?, name: String, bitRate: Int? = nil, channels: Int? = nil,
            sampleRate: Int? = nil, bitDepth: Int? = nil
        ) {
            self.path = path
            self.codec = codec
            self.duration = duration
            self.name = name
            self.bitRate = bitRate
            self.channels = channels
            self.sampleRate = sampleRate
            self.bitDepth = bitDepth
        }

        /// A track's file.
        public init(_ track: Track) {
            self.init(
                path: track.filePath, codec: track.codec, duration: track.duration, name: "\(track.id)", bitRate: track.bitrate,
                channels: track.channels, sampleRate: track.sampleRate, bitDepth: track.details.bitDepth)
            if let cue = track.details.cue { slice = (cue.start, cue.end) }
        }
    }

    /// The file of track `id` (whole or the asked range).
    public func file(_ id: TrackID, request: HTTPRequest) async throws -> HTTPResponse {
        guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
        return try file(Source(track), request: request)
    }

    /// The file of `source` (whole or the asked range).
    public func file(_ source: Source, request: HTTPRequest) throws -> HTTPResponse {
        // A track cut from an image is no file of its own: its slice, losslessly, as FLAC.
        if source.slice != nil { return try transcode(source, format: .flac, bitRate: 0, timeOffset: 0) }
        let what = source.name.contains("-") ? source.name : "track \(source.name)"
        let descriptor = open(source.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw HTTPError.notFound("the file of \(what) is missing or unreadable") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw HTTPError.notFound("the file of \(what) is not a regular file")
        }
        let size = UInt64(info.st_size)
        let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
        let etag = "\"\(source.name)-\(size)-\(info.st_mtim.tv_sec)\""
        var headers: [(String, String)] = [
            ("Content-Type", Self.mimeType(path: source.path, codec: source.codec)), ("Accept-Ranges", "bytes"),
            ("ETag", etag), ("Last-Modified", Self.httpDate(modified)), ("Cache-Control", "private, max-age=3600"),
        ]
        // A stale If-Range means the client's partial copy is of another version: send it all.
        var rangeHeader = request.headers["range"]
        if let ifRange = request.headers["if-range"], ifRange != etag, ifRange != Self.httpDate(modified) { rangeHeader = nil }
        if let match = request.headers["if-none-match"], match == etag, rangeHeader == nil {
            close(descriptor)
            return HTTPResponse(status: 304, headers: headers)
        }
        switch Self.range(rangeHeader, size: size) {
        case .whole:
            return HTTPResponse(status: 200, headers: headers, body: .file(descriptor: descriptor, offset: 0, length: size))
        case .partial(let start, let end):
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)"))
            return HTTPResponse(status: 206, headers: headers, body: .file(descriptor: descriptor, offset: start, length: end - start + 1))
        case .unsatisfiable:
            close(descriptor)
            throw HTTPError(
                status: 416, code: "rangeNotSatisfiable", message: "the range \(rangeHeader ?? "") lies outside the file's \(size) bytes",
                headers: [("Content-Range", "bytes */\(size)")])
        }
    }

    /// Track `id` transcoded to `format` from `timeOffset` seconds, streamed as ffmpeg writes it.
    public func transcode(_ id: TrackID, format: TranscodeFormat, bitRate: Int, timeOffset: Double, estimateLength: Bool = false) async throws -> HTTPResponse {
        guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
        return try transcode(Source(track), format: format, bitRate: bitRate, timeOffset: timeOffset, estimateLength: estimateLength)
    }

    /// `source` transcoded to `format` from `timeOffset` seconds, streamed as ffmpeg writes it.
    /// `channels`, when given, downmixes to that many channels.
    public func transcode(
        _ source: Source, format: TranscodeFormat, bitRate: Int, timeOffset: Double, estimateLength: Bool = false, channels: Int? = nil
    ) throws -> HTTPResponse {
        guard FileManager.default.isReadableFile(atPath: source.path) else {
            throw HTTPError.notFound("the file of \(source.name.contains("-") ? source.name : "track \(source.name)") is missing or unreadable")
        }
        let ffmpeg = try Library.findFFmpeg(ffmpegPath)
        let limit = maxTranscodes
        let admitted = running.withLock { running -> Bool in
            guard running < limit else { return false }
            running += 1
            return true
        }
        guard admitted else {
            throw HTTPError(
                status: 429, code: "tooManyTranscodes", message: "\(limit) transcodes are running, the most allowed; try again shortly",
                headers: [("Retry-After", "5")])
        }
        var arguments = ["-hide_banner", "-loglevel", "error", "-nostdin"]
        if let slice = source.slice {
            // Input options: ffmpeg seeks the image to the slice (plus the offset within it) and
            // reads only the slice's length.
            arguments += ["-ss", String(format: "%.6f", slice.start + max(0, timeOffset))]
            if let end = slice.end { arguments += ["-t", String(format: "%.6f", max(0, end - slice.start - max(0, timeOffset)))] }
        } else if timeOffset > 0 {
            arguments += ["-ss", String(format: "%.3f", timeOffset)]
        }
        arguments += ["-i", source.path, "-map", "0:a:0", "-vn", "-map_metadata", "-1"]
        if let channels, channels > 0 { arguments += ["-ac", String(channels)] }
        arguments += format.arguments(bitRate: bitRate) + ["pipe:1"]
        let process: RunningProgram
        do {
            process = try ProgramRunner.start(ffmpeg, arguments, output: .pipe)
        } catch {
            running.withLock { $0 -= 1 }
            throw error
        }
        // An estimated length (Subsonic's estimateContentLength, for players that show or seek by
        // it) is the duration left at the bit rate; flac has no bit rate to estimate from.
        var estimate: UInt64?
        if estimateLength, format != .flac, let duration = source.duration, duration > timeOffset {
            // A tag's absurd duration (a damaged file) gets no estimate rather than a trap.
            let bytes = ((duration - timeOffset) * Double(bitRate) * 1000 / 8).rounded(.up)
            if bytes.isFinite, bytes < 1e12 { estimate = UInt64(bytes) }
        }
        let stream = ByteStream(capacity: 256 * 1024, length: estimate)
        // The client went away: ffmpeg is killed at once; the reader then sees the pipe close.
        stream.onCancel { process.kill() }
        let descriptor = process.outputDescriptor ?? -1
        let counter = running
        // A plain thread, not the cooperative pool: the read blocks, and the pool has few threads.
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                let chunk = Data(buffer[0..<count])
                let done = DispatchSemaphore(value: 0)
                let accepted = Locked(false)
                Task {
                    let ok = await stream.write(chunk)
                    accepted.withLock { $0 = ok }
                    done.signal()
                }
                done.wait()
                if !accepted.withLock({ $0 }) {
                    process.kill()
                    break
                }
            }
            process.finish()
            counter.withLock { $0 -= 1 }
            stream.finish()
        }
        thread.start()
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", format.mime), ("Accept-Ranges", "none"), ("Cache-Control", "no-store")],
            body: .stream(stream))
    }

    /// An HTTP date (`Tue, 01 Dec 2026 08:56:01 GMT`), written from the C library's broken-down
    /// time: every stream response sends one, and an ICU formatter per response costs more than
    /// the rest of its headers.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(days[Int(parts.tm_wday)]), \(padded(parts.tm_mday, 2)) \(months[Int(parts.tm_mon)]) \(padded(parts.tm_year + 1900, 4)) "
            + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)) GMT"
    }
}
