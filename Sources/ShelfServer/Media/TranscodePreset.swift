import Foundation

/// A named transcode from the config's `[presets]`: a format and, for lossy ones, a bit rate.
public struct TranscodePreset: Sendable, Equatable, CustomStringConvertible {
    /// What ffmpeg produces.
    public var format: StreamResponder.TranscodeFormat
    /// Kilobits per second (ignored by flac).
    public var bitRate: Int

    /// A preset from its parts.
    public init(format: StreamResponder.TranscodeFormat, bitRate: Int) {
        self.format = format
        self.bitRate = bitRate
    }

    /// `"opus:96"`, `"mp3:192"`, `"flac"`; a lossy format without a rate gets 128 kbit/s.
    static func parse(name: String, _ value: ConfigValue) throws(ConfigValueError) -> TranscodePreset {
        let formats = StreamResponder.TranscodeFormat.allCases.map(\.rawValue)
        guard !formats.contains(name), name != "raw" else {
            throw ConfigValueError("preset '\(name)' has the name of a format; name it otherwise (mobile, car, …)")
        }
        guard case .string(let text) = value else { throw ConfigValueError("preset '\(name)' expects a string such as \"opus:96\", got \(value.kind)") }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let format = StreamResponder.TranscodeFormat(rawValue: String(parts[0])) else {
            throw ConfigValueError("preset '\(name)': '\(parts[0])' is not a format (\(formats.joined(separator: ", ")))")
        }
        var bitRate = 128
        if parts.count == 2 {
            guard let rate = Int(parts[1]), (32...320).contains(rate) else {
                throw ConfigValueError("preset '\(name)': the bit rate expects kbit/s from 32 to 320, got '\(parts[1])'")
            }
            bitRate = rate
        }
        return TranscodePreset(format: format, bitRate: bitRate)
    }

    /// `opus:96`, as the file writes it.
    public var description: String { format == .flac ? "flac" : "\(format.rawValue):\(bitRate)" }
}
