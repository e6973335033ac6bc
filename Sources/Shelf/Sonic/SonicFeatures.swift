import CSonic
import Foundation

/// A track's sonic descriptors (feature version 1): 57 numbers computed from its first 8 minutes
/// at 22,050 Hz mono, in the order of `SonicFeatures.layout`. docs/sonic.md defines each one.
public struct SonicFeatures: Sendable, Equatable {
    /// The feature version: a change of any definition bumps it, and stored rows of an older
    /// version are analysed again.
    public static let version = 1
    /// How many numbers a vector holds.
    public static let count = Int(SHELF_SONIC_COUNT)

    /// One descriptor: its name in `shelf track --json`'s `descriptors`, its unit, and where its
    /// numbers sit in the vector (MFCCs and chroma are lists).
    public struct Descriptor: Sendable {
        /// The JSON name.
        public let name: String
        /// The unit in words ("Hz", "dBFS", …).
        public let unit: String
        /// The first index and how many numbers.
        public let index: Int
        public let length: Int
    }

    /// Every descriptor, in vector order.
    public static let layout: [Descriptor] = [
        .init(name: "tempo", unit: "BPM", index: 0, length: 1),
        .init(name: "tempoConfidence", unit: "0-1", index: 1, length: 1),
        .init(name: "onsetRate", unit: "onsets/s", index: 2, length: 1),
        .init(name: "zeroCrossingRate", unit: "crossings/sample", index: 3, length: 1),
        .init(name: "zeroCrossingRateSpread", unit: "crossings/sample", index: 4, length: 1),
        .init(name: "spectralCentroid", unit: "Hz", index: 5, length: 1),
        .init(name: "spectralCentroidSpread", unit: "Hz", index: 6, length: 1),
        .init(name: "spectralBandwidth", unit: "Hz", index: 7, length: 1),
        .init(name: "spectralBandwidthSpread", unit: "Hz", index: 8, length: 1),
        .init(name: "spectralRolloff", unit: "Hz", index: 9, length: 1),
        .init(name: "spectralRolloffSpread", unit: "Hz", index: 10, length: 1),
        .init(name: "spectralFlatness", unit: "ratio", index: 11, length: 1),
        .init(name: "spectralFlatnessSpread", unit: "ratio", index: 12, length: 1),
        .init(name: "rms", unit: "dBFS", index: 13, length: 1),
        .init(name: "rmsSpread", unit: "dB", index: 14, length: 1),
        .init(name: "loudnessRange", unit: "dB", index: 15, length: 1),
        .init(name: "mfcc", unit: "dB cepstrum", index: 16, length: 13),
        .init(name: "mfccSpread", unit: "dB cepstrum", index: 29, length: 13),
        .init(name: "chroma", unit: "0-1, C first", index: 42, length: 12),
        .init(name: "key", unit: "pitch class, C = 0", index: 54, length: 1),
        .init(name: "mode", unit: "1 major, 0 minor", index: 55, length: 1),
        .init(name: "keyStrength", unit: "correlation", index: 56, length: 1),
    ]

    /// The numbers, `count` of them.
    public let values: [Float]

    /// Features from their numbers; nil unless there are exactly `count`, all finite.
    public init?(values: [Float]) {
        guard values.count == Self.count, values.allSatisfy(\.isFinite) else { return nil }
        self.values = values
    }

    /// Features from the stored bytes (little-endian 32-bit floats).
    public init?(blob: [UInt8]) {
        guard blob.count == Self.count * 4 else { return nil }
        var values = [Float](repeating: 0, count: Self.count)
        for i in 0..<Self.count {
            let bits = UInt32(blob[i * 4]) | UInt32(blob[i * 4 + 1]) << 8 | UInt32(blob[i * 4 + 2]) << 16 | UInt32(blob[i * 4 + 3]) << 24
            values[i] = Float(bitPattern: bits)
        }
        self.init(values: values)
    }

    /// The bytes stored: 228 (57 little-endian 32-bit floats).
    public var blob: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.count * 4)
        for value in values {
            let bits = value.bitPattern
            bytes += [UInt8(bits & 0xff), UInt8(bits >> 8 & 0xff), UInt8(bits >> 16 & 0xff), UInt8(bits >> 24)]
        }
        return bytes
    }

    /// Beats per minute.
    public var tempo: Double { Double(values[0]) }
    /// The estimated key's pitch class, C = 0.
    public var key: Int { Int(values[54]) }
    /// Whether the estimated key is major.
    public var isMajor: Bool { values[55] >= 0.5 }
    /// "A minor", "C♯ major".
    public var keyName: String { Self.keyName(key, major: isMajor) }
    /// "major" or "minor".
    public var modeName: String { isMajor ? "major" : "minor" }

    /// The name of pitch class `key` in `major` or minor, sharps spelled with ♯.
    public static func keyName(_ key: Int, major: Bool) -> String {
        let names = ["C", "C♯", "D", "D♯", "E", "F", "F♯", "G", "G♯", "A", "A♯", "B"]
        return "\(names[((key % 12) + 12) % 12]) \(major ? "major" : "minor")"
    }

    /// The numbers of one descriptor.
    public func values(of descriptor: Descriptor) -> ArraySlice<Float> { values[descriptor.index..<descriptor.index + descriptor.length] }
}

/// How one analysis ended, as stored beside the audio identity.
public enum SonicStatus: String, Sendable, Codable, CaseIterable {
    /// Features were computed.
    case ok
    /// The file could not be decoded (or the worker died on it, or it took too long).
    case failed
    /// Shorter than 5 s.
    case short
    /// No sample above -80 dBFS.
    case silent
}

/// What is stored for one audio identity: how its analysis ended, why, and the features.
public struct SonicRecord: Sendable, Equatable {
    /// How the analysis ended.
    public var status: SonicStatus
    /// Why there are no features (nil when there are).
    public var reason: String?
    /// The features when `status` is `.ok`.
    public var features: SonicFeatures?
    /// When it was analysed.
    public var analyzed: Date
}

/// What analysing one file gave: features, or the status and reason it has none.
public struct SonicOutcome: Sendable, Equatable {
    /// How it ended.
    public var status: SonicStatus
    /// The features when `status` is `.ok`.
    public var features: SonicFeatures?
    /// Why there are none, in words.
    public var reason: String?
    /// Seconds of audio decoded.
    public var seconds: Double

    /// An outcome of `status`.
    public init(status: SonicStatus, features: SonicFeatures? = nil, reason: String? = nil, seconds: Double = 0) {
        self.status = status
        self.features = features
        self.reason = reason
        self.seconds = seconds
    }
}

/// The descriptors computed in this process (the worker's side; the engine itself never decodes
/// a stranger's file in the server's process, see `AnalysisWorkers`).
public enum SonicAnalyzer {
    /// Decodes and analyses `path` (a slice from `start` to `end` seconds when given). `pcmOut`
    /// receives the analysed samples as raw f32le, for the tests' judges. Throws only
    /// `CancellationError`.
    public static func analyze(path: String, start: Double? = nil, end: Double? = nil, pcmOut: String? = nil, cancel: UnsafePointer<Int32>? = nil)
        throws -> SonicOutcome
    {
        var result = shelf_sonic_result()
        let status = shelf_sonic_analyze(path, start ?? 0, end ?? 0, cancel, pcmOut, &result)
        return try outcome(status, &result)
    }

    /// Analyses mono samples at 22,050 Hz (the benchmark's entry, without a decode).
    public static func analyze(samples: [Float]) -> SonicOutcome {
        var result = shelf_sonic_result()
        let status = samples.withUnsafeBufferPointer { shelf_sonic_analyze_samples($0.baseAddress, Int64($0.count), &result) }
        result.seconds = Double(samples.count) / 22_050
        return (try? outcome(status, &result)) ?? SonicOutcome(status: .failed, reason: "cancelled")
    }

    private static func outcome(_ status: Int32, _ result: inout shelf_sonic_result) throws -> SonicOutcome {
        let reason = withUnsafeBytes(of: &result.reason) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let seconds = result.seconds
        switch Int(status) {
        case Int(SHELF_SONIC_OK):
            let values = withUnsafeBytes(of: &result.features) { Array($0.bindMemory(to: Float.self)) }
            guard let features = SonicFeatures(values: values) else {
                return SonicOutcome(status: .failed, reason: "the descriptors are not finite numbers", seconds: seconds)
            }
            return SonicOutcome(status: .ok, features: features, seconds: seconds)
        case Int(SHELF_SONIC_TOO_SHORT): return SonicOutcome(status: .short, reason: reason, seconds: seconds)
        case Int(SHELF_SONIC_SILENT): return SonicOutcome(status: .silent, reason: reason, seconds: seconds)
        case Int(SHELF_SONIC_CANCELLED): throw CancellationError()
        default: return SonicOutcome(status: .failed, reason: reason.isEmpty ? "cannot be decoded" : reason, seconds: seconds)
        }
    }
}
