import Foundation
import Shelf
import ShelfCore

/// The OpenSubsonic `transcoding` extension: a client posts what it can play (`ClientInfo`), the
/// server answers whether the file plays as it is or which transcode it gets
/// (getTranscodeDecision), and serves that (getTranscodeStream) through the same ffmpeg
/// formats, presets and `--max-transcodes` limit as `stream`.
extension SubsonicAPI {
    /// What a client says it plays (the spec's ClientInfo; bit rates in bit/s).
    struct ClientInfo: Decodable, Sendable {
        struct DirectPlay: Decodable, Sendable {
            var containers: [String]
            var audioCodecs: [String]
            var protocols: [String]
            var maxAudioChannels: Int?
        }

        struct Transcoding: Decodable, Sendable {
            var container: String
            var audioCodec: String
            var `protocol`: String
            var maxAudioChannels: Int?
        }

        struct CodecProfile: Decodable, Sendable {
            var type: String
            var name: String
            var limitations: [Limitation]?
        }

        struct Limitation: Decodable, Sendable {
            var name: String
            var comparison: String
            var values: [String]
            var required: Bool
        }

        var name: String
        var platform: String
        var maxAudioBitrate: Int?
        var maxTranscodingAudioBitrate: Int?
        var directPlayProfiles: [DirectPlay]?
        var transcodingProfiles: [Transcoding]?
        var codecProfiles: [CodecProfile]?
    }

    /// A stream's properties as the spec's StreamDetails tell them.
    struct StreamDetails: SubsonicModel {
        var container: String
        var codec: String
        var channels: Int?
        /// bit/s.
        var bitRate: Int?
        var sampleRate: Int?
        var bitDepth: Int?

        func write(to w: inout SubsonicWriter) {
            w.attribute("protocol", "http")
            w.attribute("container", container)
            w.attribute("codec", codec)
            w.attribute("audioChannels", channels)
            w.attribute("audioBitrate", bitRate)
            w.attribute("audioSamplerate", sampleRate)
            w.attribute("audioBitdepth", bitDepth)
        }
    }

    /// The answer of getTranscodeDecision.
    struct TranscodeDecision: SubsonicModel {
        var canDirectPlay: Bool
        var canTranscode: Bool
        var reasons: [String]
        var errorReason: String
        var params: String?
        var source: StreamDetails
        var target: StreamDetails?

        func write(to w: inout SubsonicWriter) {
            w.attribute("canDirectPlay", canDirectPlay)
            w.attribute("canTranscode", canTranscode)
            if !errorReason.isEmpty { w.attribute("errorReason", errorReason) }
            w.attribute("transcodeParams", params)
            w.strings("transcodeReason", reasons)
            w.element("sourceStream", source)
            if let target { w.element("transcodeStream", target) }
        }
    }

    /// A transcode chosen: the format, bit rate (kbit/s) and channel count (0: as the source).
    struct TranscodeChoice: Equatable {
        var format: StreamResponder.TranscodeFormat?
        var bitRate: Int
        var channels: Int

        /// `transcodeParams`: `direct`, or `FORMAT-KBPS-CHANNELS` (URL-safe; every value is
        /// checked again when it comes back, so a made-up one can ask for nothing `stream` would not give).
        var params: String { format.map { "\($0.rawValue)-\(bitRate)-\(channels)" } ?? "direct" }

        static func parse(_ text: String) -> TranscodeChoice? {
            if text == "direct" { return TranscodeChoice(format: nil, bitRate: 0, channels: 0) }
            let parts = text.split(separator: "-")
            guard parts.count == 3, let format = StreamResponder.TranscodeFormat(rawValue: String(parts[0])),
                let bitRate = Int(parts[1]), (0...320).contains(bitRate), let channels = Int(parts[2]), (0...8).contains(channels)
            else { return nil }
            return TranscodeChoice(format: format, bitRate: bitRate, channels: channels)
        }
    }

    /// The container and codec names the spec's profiles use, and what is known of the audio, for a source.
    static func streamDetails(_ source: StreamResponder.Source) -> StreamDetails {
        let suffix = StreamResponder.fileSuffix(source.path)
        let container: String
        switch suffix {
        case "m4a", "m4b", "mp4", "alac": container = "mp4"
        case "oga", "opus": container = "ogg"
        case "aif", "aiff": container = "aiff"
        default: container = suffix
        }
        var name = (source.codec ?? "").lowercased()
        if name.isEmpty || name == "pcm" { name = suffix == "wav" ? "pcm" : (name.isEmpty ? suffix : name) }
        return StreamDetails(
            container: container, codec: name, channels: source.channels, bitRate: source.bitRate.map { $0 * 1000 },
            sampleRate: source.sampleRate, bitDepth: source.bitDepth.flatMap { $0 > 0 ? $0 : nil })
    }

    /// The media a decision or stream is about: `mediaId` of `mediaType` song or podcast.
    private func media(_ parameters: SubsonicParameters) async throws -> StreamResponder.Source {
        let id = try parameters.required("mediaId")
        let type = try parameters.required("mediaType")
        switch type {
        case "song":
            let trackID = try SubsonicParameters.track(id, "mediaId")
            guard let track = try await library.track(trackID) else { throw SubsonicError.notFound("song \(id)") }
            return StreamResponder.Source(track)
        case "podcast":
            guard let source = try await episodeSource(id) else { throw SubsonicError.notFound("podcast episode '\(id)' (mediaId)") }
            return source
        default:
            throw SubsonicError.invalid("mediaType", type, "song or podcast")
        }
    }

    /// getTranscodeDecision: POST with a ClientInfo JSON body.
    func transcodeDecision(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.stream, of: user, for: "stream")
        guard call.http.method == "POST" else {
            throw SubsonicError(0, "getTranscodeDecision is POST with a ClientInfo JSON body", status: 405)
        }
        let source = Self.streamDetails(try await media(call.parameters))
        let client: ClientInfo
        do {
            client = try JSONDecoder().decode(ClientInfo.self, from: call.http.body)
        } catch {
            throw SubsonicError(0, "the body is not a ClientInfo JSON document (name and platform are required): \(Self.describe(error))")
        }
        return .element("transcodeDecision", decide(client, source: source, userMaxKbps: user.maxBitRate, originals: user.may(.download)))
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        case DecodingError.dataCorrupted(let context): context.debugDescription
        default: "\(error)"
        }
    }

    /// The decision for `source` and what `client` plays; without `originals` (the download
    /// role) direct play is never offered: the original file does not leave the server.
    func decide(_ client: ClientInfo, source: StreamDetails, userMaxKbps: Int, originals: Bool = true) -> TranscodeDecision {
        // Limits in bit/s; 0 or absent: none. The user's own cap applies to both.
        let userMax = userMaxKbps > 0 ? userMaxKbps * 1000 : 0
        func tighter(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }
        let maxDirect = tighter(client.maxAudioBitrate ?? 0, userMax)
        var reasons: [String] = []
        var direct = false
        if !originals { reasons.append("DirectPlayNotAllowed") }
        for profile in client.directPlayProfiles ?? [] where originals {
            var why: [String] = []
            if !profile.containers.isEmpty, !profile.containers.contains(where: { $0.lowercased() == source.container }) { why.append("ContainerNotSupported") }
            if !profile.audioCodecs.isEmpty, !profile.audioCodecs.contains(where: { $0.lowercased() == source.codec }) { why.append("AudioCodecNotSupported") }
            if !profile.protocols.isEmpty, !profile.protocols.contains("http") { why.append("ProtocolNotSupported") }
            if let most = profile.maxAudioChannels, let channels = source.channels, channels > most { why.append("AudioChannelsNotSupported") }
            if maxDirect > 0, let bitRate = source.bitRate, bitRate > maxDirect { why.append("AudioBitrateNotSupported") }
            why += Self.failedLimitations(client, codec: source.codec, details: source)
            if why.isEmpty {
                direct = true
                break
            }
            reasons.append(why.joined(separator: ","))
        }
        if client.directPlayProfiles?.isEmpty ?? true { reasons.append("NoDirectPlayProfile") }
        if direct {
            return TranscodeDecision(
                canDirectPlay: true, canTranscode: false, reasons: [], errorReason: "",
                params: TranscodeChoice(format: nil, bitRate: 0, channels: 0).params, source: source, target: nil)
        }
        let maxTranscode = tighter(client.maxTranscodingAudioBitrate ?? 0, userMax)
        for profile in client.transcodingProfiles ?? [] where profile.protocol.lowercased() == "http" {
            guard let format = Self.format(container: profile.container.lowercased(), codec: profile.audioCodec.lowercased()) else { continue }
            // The preset of the config for this format sets the default bit rate, as for `stream`.
            let preset = context.streams.presets.values.filter { $0.format == format }.map(\.bitRate).min()
            var kbps = preset ?? 192
            if maxTranscode > 0 { kbps = min(kbps, maxTranscode / 1000) }
            if let limit = Self.bitRateLimit(client, codec: profile.audioCodec.lowercased()) { kbps = min(kbps, limit / 1000) }
            kbps = max(32, min(320, kbps))
            var channels = 0
            if let most = profile.maxAudioChannels, most > 0, (source.channels ?? 2) > most { channels = most }
            let choice = TranscodeChoice(format: format, bitRate: format == .flac ? 0 : kbps, channels: channels)
            let target = StreamDetails(
                container: profile.container.lowercased(), codec: profile.audioCodec.lowercased(),
                channels: channels > 0 ? channels : source.channels, bitRate: format == .flac ? nil : kbps * 1000,
                // Opus is always 48 kHz; mp3 and aac go up to 48 kHz (ffmpeg resamples above it).
                sampleRate: format == .opus ? 48_000 : format == .flac ? source.sampleRate : source.sampleRate.map { min($0, 48_000) },
                bitDepth: format == .flac ? source.bitDepth : nil)
            return TranscodeDecision(
                canDirectPlay: false, canTranscode: true, reasons: reasons, errorReason: "", params: choice.params,
                source: source, target: target)
        }
        return TranscodeDecision(
            canDirectPlay: false, canTranscode: false, reasons: reasons,
            errorReason:
                "no direct play profile takes this file, and no http transcoding profile asks for a format Shelf makes (mp3, opus in ogg, aac in adts, flac)",
            params: nil, source: source, target: nil)
    }

    /// The ffmpeg format of a transcoding profile; nil when Shelf does not make it.
    static func format(container: String, codec: String) -> StreamResponder.TranscodeFormat? {
        switch (container, codec) {
        case ("mp3", "mp3"): .mp3
        case ("ogg", "opus"), ("opus", "opus"): .opus
        case ("aac", "aac"), ("adts", "aac"): .aac
        case ("flac", "flac"): .flac
        default: nil
        }
    }

    /// The required limitations of the codec profile for `codec` that `details` breaks.
    static func failedLimitations(_ client: ClientInfo, codec: String, details: StreamDetails) -> [String] {
        var failed: [String] = []
        for profile in client.codecProfiles ?? [] where profile.type == "AudioCodec" && profile.name.lowercased() == codec {
            for limitation in profile.limitations ?? [] where limitation.required {
                let value: Int?
                switch limitation.name {
                case "audioChannels": value = details.channels
                case "audioBitrate": value = details.bitRate
                case "audioSamplerate": value = details.sampleRate
                case "audioBitdepth": value = details.bitDepth
                default: continue  // audioProfile: Shelf does not know a file's codec profile
                }
                guard let value else { continue }
                let numbers = limitation.values.compactMap { Int($0) }
                let ok: Bool
                switch limitation.comparison {
                case "Equals": ok = numbers.contains(value)
                case "NotEquals": ok = !numbers.contains(value)
                case "LessThanEqual": ok = numbers.first.map { value <= $0 } ?? true
                case "GreaterThanEqual": ok = numbers.first.map { value >= $0 } ?? true
                default: ok = true
                }
                if !ok { failed.append("\(limitation.name.prefix(1).uppercased())\(limitation.name.dropFirst())NotSupported") }
            }
        }
        return failed
    }

    /// The lowest `audioBitrate` LessThanEqual limit the client sets for `codec` (bit/s).
    static func bitRateLimit(_ client: ClientInfo, codec: String) -> Int? {
        var lowest: Int?
        for profile in client.codecProfiles ?? [] where profile.type == "AudioCodec" && profile.name.lowercased() == codec {
            for limitation in profile.limitations ?? [] where limitation.name == "audioBitrate" && limitation.comparison == "LessThanEqual" {
                guard let value = limitation.values.first.flatMap({ Int($0) }) else { continue }
                lowest = min(lowest ?? value, value)
            }
        }
        return lowest
    }

    /// getTranscodeStream: the stream getTranscodeDecision chose. Errors are plain HTTP statuses,
    /// as the spec asks (400 for bad parameters, 404 for unknown media, 429 over the transcode limit).
    func transcodeStream(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.stream, of: user, for: "stream")
        func plain(_ status: Int, _ message: String) -> SubsonicReply {
            .binary(HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: .data(Data((message + "\n").utf8))))
        }
        let p = call.parameters
        guard let paramsText = p.value("transcodeParams"), let choice = TranscodeChoice.parse(paramsText) else {
            return plain(400, "transcodeParams is missing or not one getTranscodeDecision made")
        }
        let offset: Int
        do {
            offset = try p.int("offset", default: 0, in: 0...86_400) ?? 0
        } catch {
            return plain(400, error.message)
        }
        let source: StreamResponder.Source
        do {
            source = try await media(p)
        } catch let error as SubsonicError {
            return plain(error.code == 70 ? 404 : 400, error.message)
        }
        do {
            guard let format = choice.format else {
                if offset > 0 || !user.may(.download) {
                    let kbps = user.maxBitRate > 0 ? max(32, min(192, user.maxBitRate)) : 192
                    return .binary(try context.streams.transcode(source, format: .mp3, bitRate: kbps, timeOffset: Double(offset)))
                }
                return .binary(try context.streams.file(source, request: call.http))
            }
            var kbps = choice.bitRate > 0 ? choice.bitRate : 192
            if user.maxBitRate > 0 { kbps = min(kbps, user.maxBitRate) }
            return .binary(
                try context.streams.transcode(
                    source, format: format, bitRate: max(32, kbps), timeOffset: Double(offset), channels: choice.channels > 0 ? choice.channels : nil))
        } catch let error as HTTPError {
            return .binary(
                HTTPResponse(
                    status: error.status, headers: error.headers + [("Content-Type", "text/plain; charset=utf-8")],
                    body: .data(Data((error.message + "\n").utf8))))
        }
    }
}
