import Foundation
import Shelf
import ShelfCore

/// `"sonic": {"version","tempo","key","mode","descriptors":{NAME: VALUE|[VALUE…]}}`: a track's
/// features as `shelf track --json` shows them (docs/sonic.md names each descriptor's unit).
public struct SonicDocument: Encodable, Sendable {
    /// The features shown.
    public let features: SonicFeatures

    /// The document of `features`.
    public init(_ features: SonicFeatures) { self.features = features }

    struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Name.self)
        try c.encode(SonicFeatures.version, forKey: Name(stringValue: "version"))
        try c.encode(Self.rounded(features.tempo), forKey: Name(stringValue: "tempo"))
        try c.encode(SonicFeatures.keyName(features.key, major: true).split(separator: " ").first.map(String.init) ?? "", forKey: Name(stringValue: "key"))
        try c.encode(features.modeName, forKey: Name(stringValue: "mode"))
        var d = c.nestedContainer(keyedBy: Name.self, forKey: Name(stringValue: "descriptors"))
        for descriptor in SonicFeatures.layout {
            let values = features.values(of: descriptor).map { Self.rounded(Double($0)) }
            if descriptor.length == 1 {
                try d.encode(values[0], forKey: Name(stringValue: descriptor.name))
            } else {
                try d.encode(values, forKey: Name(stringValue: descriptor.name))
            }
        }
    }

    /// Six significant digits: the descriptors are 32-bit floats.
    static func rounded(_ value: Double) -> Double {
        guard value != 0, value.isFinite else { return value }
        let magnitude = pow(10, 5 - floor(log10(abs(value))))
        return (value * magnitude).rounded() / magnitude
    }
}

/// A track with its `sonic` features (null until analysed) and `analysis`
/// (`{"status":"ok|failed|short|silent","reason"}`, null until analysed): `shelf track ID --json`.
public struct TrackWithSonic: Encodable, Sendable {
    /// The track.
    public let track: Track
    /// What analysis recorded, nil before it.
    public let record: SonicRecord?

    /// The document of `track` and its analysis.
    public init(track: Track, record: SonicRecord?) {
        self.track = track
        self.record = record
    }

    struct Analysis: Encodable {
        let status: String
        let reason: String?
        let analyzed: Date
    }

    enum Keys: String, CodingKey { case sonic, analysis }

    public func encode(to encoder: any Encoder) throws {
        try track.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(record?.features.map(SonicDocument.init), forKey: .sonic)
        try container.encode(record.map { Analysis(status: $0.status.rawValue, reason: $0.reason, analyzed: $0.analyzed) }, forKey: .analysis)
    }
}

/// One neighbour or path step: `{"track":{…},"similarity":0.93,"why":["tempo 126 vs 128 BPM",…],
/// "traits":[{"kind":"tempo","a":"126","b":"128"},…]}` (`traits` for pages that word them).
public struct SonicMatchDocument: Encodable, Sendable {
    /// The whole track.
    public let track: Track
    /// 0–1, as `SonicMatch.similarity`.
    public let similarity: Double
    /// The shared traits in English words.
    public let why: [String]
    /// The same traits as data, for pages that word them in their own language.
    public let traits: [SonicTrait]

    /// The document of `match` with its track.
    public init(_ match: SonicMatch, track: Track) {
        self.track = track
        similarity = match.similarity
        why = match.traits.map(\.text)
        traits = match.traits
    }
}

/// `{"matches":[…]}`: `shelf similar --json` and `/api/tracks/{id}/similar`.
public struct SimilarDocument: Encodable, Sendable {
    /// Most similar first.
    public let matches: [SonicMatchDocument]
    /// The document of `matches`.
    public init(matches: [SonicMatchDocument]) { self.matches = matches }
}

/// `{"path":[…]}`: `shelf mix --json` and `/api/mix`.
public struct MixDocument: Encodable, Sendable {
    /// From the start track to the end track.
    public let path: [SonicMatchDocument]
    /// The document of `path`.
    public init(path: [SonicMatchDocument]) { self.path = path }
}

/// `{"analyzed":N,"skipped":N,"failed":[{"path","status","reason"}],"audioSeconds","seconds"}`:
/// `shelf analyze --json`.
public typealias AnalysisDocument = AnalysisReport

extension Library {
    /// The documents of `matches` with their tracks (a track gone since is left out).
    public func sonicDocuments(_ matches: [SonicMatch]) async throws -> [SonicMatchDocument] {
        let found = Dictionary(try await tracks(ids: matches.map(\.track)).tracks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return matches.compactMap { match in found[match.track].map { SonicMatchDocument(match, track: $0) } }
    }
}
