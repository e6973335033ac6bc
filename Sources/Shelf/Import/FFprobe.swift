import Foundation
import ShelfCore

/// Why ffprobe could not describe a file. The descriptions leave the file's path to the caller,
/// which names it once (import failures read "cannot read PATH: …").
public enum FFprobeError: ClassifiedError, Equatable {
    /// ffprobe missing is the machine's; a file it cannot read is the file's.
    public var kind: ErrorKind {
        switch self {
        case .notInstalled: .unavailable
        case .failed, .noAudio: .invalid
        }
    }

    /// "toolMissing" or "unreadableFile".
    public var errorCode: String {
        switch self {
        case .notInstalled: "toolMissing"
        case .failed, .noAudio: "unreadableFile"
        }
    }

    /// No `ffprobe` executable on PATH (or at the path given).
    case notInstalled(searched: String)
    /// ffprobe ran but could not open or parse the file.
    case failed(reason: String)
    /// ffprobe opened the file and found no audio stream with a rate, channels and a duration.
    case noAudio

    /// The reason in words, without the file's path.
    public var description: String {
        switch self {
        case .notInstalled(let searched):
            "this format is read through ffprobe, which is not installed (looked in \(searched)); install Debian's ffmpeg package (apt-get install ffmpeg)"
        case .failed(let reason): "ffprobe cannot read it: \(reason)"
        case .noAudio: "ffprobe found no audio stream with a sample rate, channels and a duration"
        }
    }
}

/// Reads tags, duration and stream properties through `ffprobe` for the containers and codecs
/// TagLib 1.13 cannot decode (see `AudioFile`).
public struct FFprobe: Sendable {
    /// The executable run.
    public let executable: String

    /// ffprobe at `path`, or else the first one on `searchPath` (PATH by default).
    public static func locate(path: String? = nil, searchPath: String? = nil) throws(FFprobeError) -> FFprobe {
        do {
            return FFprobe(executable: try ProgramRunner.locate(.ffprobe, path: path, searchPath: searchPath))
        } catch {
            guard case .notInstalled(let searched, _) = error.reason else { throw .failed(reason: error.description) }
            throw .notInstalled(searched: searched)
        }
    }

    /// The one found on PATH when first needed; PATH is not searched again for every file.
    static let onPath: Result<FFprobe, FFprobeError> = Result { () throws(FFprobeError) in try locate() }

    /// The file's tags (mapped to TagLib's unified keys), duration and first audio stream's
    /// properties; `layout` names the codec where ffprobe's name would mislead (a module is
    /// reported as the PCM its player renders).
    func read(_ url: URL, layout: AudioLayout? = nil) throws(FFprobeError) -> AudioFileTags {
        let output: Data
        let status: Int32
        do {
            (status, output) = try Self.run(
                executable,
                [
                    "-v", "error", "-show_error", "-print_format", "json", "-show_format", "-show_streams", "file:" + url.path,
                ])
        } catch {
            throw .failed(reason: "could not run \(executable): \(error)")
        }
        guard let probe = try? JSONDecoder().decode(Probe.self, from: output) else {
            throw .failed(reason: "exit status \(status), output not JSON")
        }
        if let error = probe.error { throw .failed(reason: error.string ?? "error \(error.code ?? 0)") }
        guard status == 0 else { throw .failed(reason: "exit status \(status)") }
        guard let stream = probe.streams?.first(where: { $0.codec_type == "audio" }) else { throw .noAudio }
        let duration =
            Self.seconds(stream.duration) ?? Self.seconds(probe.format?.duration)
            ?? stream.tags?.first { $0.key.uppercased() == "DURATION" }.flatMap { Self.clock($0.value) }
        let codecName = stream.codec_name ?? ""
        // ffmpeg unpacks DSD eight one-bit samples to a byte and reports that byte rate.
        let rate = (Int(stream.sample_rate ?? "") ?? 0) * (codecName.hasPrefix("dsd_") ? 8 : 1)
        let channels = stream.channels ?? 0
        guard let duration, duration > 0, rate > 0, channels > 0 else { throw .noAudio }
        var bitrate = (Int(stream.bit_rate ?? "") ?? Int(probe.format?.bit_rate ?? "") ?? 0)
        var codec = codecName.hasPrefix("pcm_") ? "pcm" : codecName.hasPrefix("dsd_") ? "dsd" : codecName
        if case .module(let kind)? = layout {
            codec = kind
            // The rendered PCM's rate says nothing about the file; its own size over time does.
            let size = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
            bitrate = Int(Double(size * 8) / duration)
        }
        // The stream's tags (where Ogg keeps them), then the file's (where most containers do),
        // which win; keys in order so that two spellings of one key always resolve the same way.
        var properties: [String: String] = [:]
        for tags in [stream.tags ?? [:], probe.format?.tags ?? [:]] {
            for (key, value) in tags.sorted(by: { $0.key < $1.key }) where !value.isEmpty {
                if let unified = Self.unifiedKey(key) { properties[unified] = value }
            }
        }
        Self.addTotals(&properties, stream.tags ?? [:], probe.format?.tags ?? [:])
        return AudioFileTags(
            properties: properties, durationMilliseconds: Int((duration * 1000).rounded()), bitrate: (bitrate + 500) / 1000,
            sampleRate: rate, channels: channels, codec: codec, picture: nil, pictureMimeType: nil)
    }

    /// TagLib's unified key for one of ffmpeg's metadata keys (its own names, Vorbis comments,
    /// ID3 and MP4 names, APE and Matroska ones, in any case), or nil for keys Shelf ignores.
    static func unifiedKey(_ raw: String) -> String? {
        let key = raw.uppercased().filter { $0.isLetter || $0.isNumber }
        switch key {
        case "TITLE", "ARTIST", "ALBUM", "ALBUMARTIST", "COMPOSER", "GENRE", "DATE", "COMMENT", "LYRICS", "COMPILATION",
            "TITLESORT", "ARTISTSORT", "ALBUMSORT", "ALBUMARTISTSORT", "COMPOSERSORT":
            return key
        case "TRACK", "TRACKNUMBER", "PARTNUMBER": return "TRACKNUMBER"
        case "DISC", "DISCNUMBER": return "DISCNUMBER"
        case "YEAR", "DATERELEASED": return "DATE"
        case "SORTNAME": return "TITLESORT"
        case "SORTARTIST": return "ARTISTSORT"
        case "SORTALBUM": return "ALBUMSORT"
        case "SORTALBUMARTIST": return "ALBUMARTISTSORT"
        case "SORTCOMPOSER": return "COMPOSERSORT"
        default: return key.hasPrefix("LYRICS") ? "LYRICS" : nil  // ID3's USLT comes as "lyrics-eng"
        }
    }

    /// Vorbis-style TRACKTOTAL/DISCTOTAL beside a bare number become TagLib's "3/12".
    static func addTotals(_ properties: inout [String: String], _ streamTags: [String: String], _ formatTags: [String: String]) {
        let all = streamTags.merging(formatTags) { _, format in format }
        func total(_ names: [String]) -> String? {
            all.first { names.contains($0.key.uppercased().filter { $0.isLetter }) }?.value
        }
        for (key, names) in [("TRACKNUMBER", ["TRACKTOTAL", "TOTALTRACKS"]), ("DISCNUMBER", ["DISCTOTAL", "TOTALDISCS"])] {
            if let number = properties[key], !number.contains("/"), let count = total(names) { properties[key] = "\(number)/\(count)" }
        }
    }

    static func seconds(_ text: String?) -> Double? { text.flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil } }

    /// Matroska's per-track DURATION tag, "HH:MM:SS.fraction".
    static func clock(_ text: String) -> Double? {
        let parts = text.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { return nil }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }

    /// Runs ffprobe to its end and returns its exit status and standard output (`-show_error`
    /// puts the reason in the JSON). A minute is far beyond any file's probe: a hung ffprobe is
    /// killed rather than holding an import forever.
    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, Data) {
        let finished = try ProgramRunner.run(executable, arguments, timeout: 60)
        return (finished.status, finished.output)
    }

    // ffprobe's JSON, the fields Shelf reads (names as ffprobe spells them).
    struct Probe: Decodable {
        var streams: [Stream]?
        var format: Format?
        var error: ProbeError?
    }

    struct Stream: Decodable {
        var codec_type: String?
        var codec_name: String?
        var sample_rate: String?
        var channels: Int?
        var bit_rate: String?
        var duration: String?
        var tags: [String: String]?
    }

    struct Format: Decodable {
        var duration: String?
        var bit_rate: String?
        var tags: [String: String]?
    }

    struct ProbeError: Decodable {
        var code: Int?
        var string: String?
    }
}
