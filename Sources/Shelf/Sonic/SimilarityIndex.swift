import CSonic
import Foundation
import ShelfCore
import ShelfDatabase

/// One trait two tracks share, for "why" lines: `kind` names it (`tempo`, `key`, `relativeKey`,
/// `brightness`, `timbre`, `loudness`, `texture`, `density`, `dynamics`), `a` and `b` carry the two
/// values where a trait has them (BPM, key names).
public struct SonicTrait: Sendable, Codable, Equatable {
    /// Which trait (`tempo`, `key`, `relativeKey`, `brightness`, …).
    public var kind: String
    /// The first track's value (BPM, key name), where the trait has one.
    public var a: String?
    /// The second track's value.
    public var b: String?

    /// The trait in English words ("tempo 126 vs 128 BPM", "same key (A minor)").
    public var text: String {
        switch kind {
        case "tempo": return a == b ? "same tempo (\(a ?? "?") BPM)" : "tempo \(a ?? "?") vs \(b ?? "?") BPM"
        case "key": return "same key (\(a ?? "?"))"
        case "relativeKey": return "relative keys (\(a ?? "?"), \(b ?? "?"))"
        case "brightness": return "similar brightness"
        case "timbre": return "similar timbre"
        case "loudness": return "similar loudness"
        case "texture": return "similar texture"
        case "density": return "similar rhythmic density"
        default: return "similar dynamics"
        }
    }
}

/// A neighbour of a track: which, how similar (1 is the track itself), and why.
public struct SonicMatch: Sendable, Equatable {
    /// The neighbour.
    public var track: TrackID
    /// 0–1: 1 for the track itself, 0.5 at the library's typical distance (docs/sonic.md).
    public var similarity: Double
    /// Up to three traits the two share, closest first.
    public var traits: [SonicTrait]
}

/// The analysed tracks as small vectors in memory: each track's descriptors standardised over the
/// library, weighted (docs/sonic.md gives the weights) and stored as 46 signed bytes, beside its
/// ID, its audio, album and artist (for "not the same audio", "other albums first") and its tempo
/// and key (for the "why" lines): 71 bytes a track. A query is one scan of all the vectors.
final class SimilarityIndex: Sendable {
    /// The vector's numbers and their weights.
    static let weights: [Float] =
        [1.0, 0.6, 0.5, 0.8, 0.5, 0.5, 0.8, 0.6, 0.4, 0.4]
        + Array(repeating: 0.45, count: 12) + Array(repeating: 0.25, count: 12) + Array(repeating: 0.3, count: 12)
    static let dims = 46
    /// Standardised, weighted units a byte step stands for.
    static let scale: Float = 16

    /// The numbers the index compares, before standardising: tempo as log2 BPM (so 120 vs 126 is
    /// as far as 60 vs 63), flatness as log10, the rest as measured; MFCCs 1–12 (0 is loudness,
    /// which `rms` carries), their spreads, and the chroma profile scaled to sum 1.
    static func raw(_ f: SonicFeatures) -> [Float] {
        let v = f.values
        var out: [Float] = [
            log2(max(v[0], 1)), v[2], v[3], v[5], v[7], v[9], log10(max(v[11], 1e-6)), v[13], v[14], v[15],
        ]
        out += v[17..<29]
        out += v[30..<42]
        let chroma = v[42..<54]
        let sum = max(chroma.reduce(0, +), 1e-6)
        out += chroma.map { $0 / sum }
        return out
    }

    let ids: [Int64]  // ascending
    let vectors: [Int8]
    let audio: [Int32]
    let album: [Int32]
    let artist: [Int32]
    let tempo: [Float]
    let keyMode: [UInt8]  // key * 2 + major
    /// The median distance between two random tracks: similarity is 0.5 there.
    let typical: Float
    /// What the index was built from (`max(rowid)` of `sonic`, `max(id)` of `track`).
    let generation: [Int64]

    var count: Int { ids.count }

    /// Memory the index holds, in bytes.
    var bytes: Int { ids.count * 8 + vectors.count + (audio.count + album.count + artist.count + tempo.count) * 4 + keyMode.count }

    /// The index of `db`'s current analysis.
    init(db: Connection, generation: [Int64]) throws {
        self.generation = generation
        var ids: [Int64] = []
        // Half-precision while building (46 MB at 500,500 tracks rather than 92): the numbers
        // become signed bytes at the end anyway.
        var raws: [Float16] = []
        var audio: [Int32] = []
        var album: [Int32] = []
        var artist: [Int32] = []
        var tempo: [Float] = []
        var keyMode: [UInt8] = []
        // Keys by their 64-bit hashes, not their text: a collision among half a million is about
        // one chance in 10⁸, and the text would be tens of megabytes while building.
        var audioKeys: [Int: Int32] = [:]
        var albumKeys: [Int: Int32] = [:]
        var artistKeys: [Int: Int32] = [:]
        func number(_ text: String, _ table: inout [Int: Int32]) -> Int32 {
            let key = text.hashValue
            if let n = table[key] { return n }
            let n = Int32(table.count)
            table[key] = n
            return n
        }
        try db.forEachRow(
            """
            SELECT t.id, s.audio, t.album, t.album_artist, t.artist, s.features FROM track t
            JOIN sonic s ON s.audio = (\(Library.sonicKeySQL)) AND s.version = ? AND s.status = 'ok'
            WHERE t.missing_since IS NULL ORDER BY t.id
            """, [SonicFeatures.version]
        ) { row in
            guard let blob = row.optionalData(5), let features = SonicFeatures(blob: Array(blob)) else { return }
            ids.append(row.nonNullInt64(0))
            audio.append(number(row.optionalString(1) ?? "", &audioKeys))
            let albumName = row.optionalString(2) ?? ""
            album.append(albumName.isEmpty ? -1 : number((row.optionalString(3) ?? "") + "\u{1F}" + albumName, &albumKeys))
            artist.append(number((row.optionalString(4) ?? "").lowercased(), &artistKeys))
            tempo.append(features.values[0])
            keyMode.append(UInt8(features.key * 2 + (features.isMajor ? 1 : 0)))
            raws += Self.raw(features).map { Float16($0) }
        }
        let n = ids.count
        let d = Self.dims
        var mean = [Double](repeating: 0, count: d)
        var sd = [Double](repeating: 0, count: d)
        for i in 0..<n { for k in 0..<d { mean[k] += Double(raws[i * d + k]) } }
        for k in 0..<d { mean[k] /= Double(max(n, 1)) }
        for i in 0..<n {
            for k in 0..<d {
                let x = Double(raws[i * d + k]) - mean[k]
                sd[k] += x * x
            }
        }
        for k in 0..<d { sd[k] = (sd[k] / Double(max(n, 1))).squareRoot() }
        var vectors = [Int8](repeating: 0, count: n * d)
        for i in 0..<n {
            for k in 0..<d {
                let z = sd[k] > 1e-9 ? (Double(raws[i * d + k]) - mean[k]) / sd[k] : 0
                vectors[i * d + k] = Int8(max(-127, min(127, (z * Double(Self.weights[k]) * Double(Self.scale)).rounded())))
            }
        }
        self.ids = ids
        self.vectors = vectors
        self.audio = audio
        self.album = album
        self.artist = artist
        self.tempo = tempo
        self.keyMode = keyMode
        // Pairs drawn with a fixed seed, so that the same library gives the same similarities.
        var distances: [Float] = []
        if n >= 2 {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            func draw() -> Int {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((state >> 33) % UInt64(n))
            }
            for _ in 0..<min(4_000, n * 4) {
                let (x, y) = (draw(), draw())
                guard x != y else { continue }
                var acc: Int32 = 0
                for k in 0..<d {
                    let diff = Int32(vectors[x * d + k]) - Int32(vectors[y * d + k])
                    acc += diff * diff
                }
                distances.append(Float(acc).squareRoot())
            }
        }
        distances.sort()
        typical = max(distances.isEmpty ? Self.scale * 4 : distances[distances.count / 2], 1)
    }

    /// The row of a track, nil when it is not analysed.
    func row(of id: TrackID) -> Int? {
        var (lo, hi) = (0, ids.count)
        while lo < hi {
            let mid = (lo + hi) / 2
            if ids[mid] < id.rawValue { lo = mid + 1 } else { hi = mid }
        }
        return lo < ids.count && ids[lo] == id.rawValue ? lo : nil
    }

    /// Similarity from a squared distance in byte units: 1 at 0, 0.5 at the typical distance,
    /// falling smoothly; only a track with itself gets 1 (others stop at 0.9999).
    func similarity(squared: Int32, same: Bool) -> Double {
        if same { return 1 }
        let ratio = Double(squared) / Double(typical * typical)
        return min(0.9999, (pow(2, -ratio) * 10_000).rounded() / 10_000)
    }

    /// The squared distance between two rows, in byte units.
    func squaredDistance(_ x: Int, _ y: Int) -> Int32 {
        var acc: Int32 = 0
        for k in 0..<Self.dims {
            let diff = Int32(vectors[x * Self.dims + k]) - Int32(vectors[y * Self.dims + k])
            acc += diff * diff
        }
        return acc
    }

    /// The `limit` rows nearest row `r` (other audio only), nearest first, ties by row, with their
    /// squared distances: one scan in C with a bounded heap.
    func nearest(to r: Int, limit: Int) -> [(row: Int, squared: Int32)] {
        guard limit > 0 else { return [] }
        var rows = [Int64](repeating: 0, count: limit)
        var squared = [Int32](repeating: 0, count: limit)
        let found = vectors.withUnsafeBufferPointer { v in
            audio.withUnsafeBufferPointer { groups in
                shelf_sonic_nearest(
                    v.baseAddress, Int64(count), Int32(Self.dims), v.baseAddress! + r * Self.dims, groups.baseAddress, audio[r], Int32(limit), &rows,
                    &squared)
            }
        }
        return (0..<max(0, Int(found))).map { (Int(rows[$0]), squared[$0]) }
    }

    /// For `steps` evenly spaced points from row `a` to row `b`, up to `keep` rows near each
    /// (nearest first), none of either end's audio.
    func pathCandidates(from a: Int, to b: Int, steps: Int, keep: Int) -> [[Int]] {
        guard steps > 0 else { return [] }
        var rows = [Int64](repeating: -1, count: steps * keep)
        var costs = [Double](repeating: 0, count: steps * keep)
        vectors.withUnsafeBufferPointer { v in
            audio.withUnsafeBufferPointer { groups in
                _ = shelf_sonic_path_candidates(
                    v.baseAddress, Int64(count), Int32(Self.dims), v.baseAddress! + a * Self.dims, v.baseAddress! + b * Self.dims, groups.baseAddress,
                    audio[a], audio[b], Int32(steps), Int32(keep), &rows, &costs)
            }
        }
        return (0..<steps).map { slot in rows[slot * keep..<(slot + 1) * keep].filter { $0 >= 0 }.map { Int($0) } }
    }

    /// The traits rows `a` and `b` share most, two or three of them, closest first.
    func traits(_ a: Int, _ b: Int) -> [SonicTrait] {
        var found: [(Double, SonicTrait)] = []
        let (ta, tb) = (tempo[a], tempo[b])
        if ta > 0, tb > 0, abs(ta - tb) / max(ta, tb) <= 0.04 {
            found.append((0, SonicTrait(kind: "tempo", a: String(Int(ta.rounded())), b: String(Int(tb.rounded())))))
        }
        let (ka, kb) = (Int(keyMode[a]), Int(keyMode[b]))
        let nameA = SonicFeatures.keyName(ka / 2, major: ka % 2 == 1)
        let nameB = SonicFeatures.keyName(kb / 2, major: kb % 2 == 1)
        if ka == kb {
            found.append((0.1, SonicTrait(kind: "key", a: nameA, b: nameB)))
        } else if ka % 2 != kb % 2 {
            let (minor, major) = ka % 2 == 0 ? (ka / 2, kb / 2) : (kb / 2, ka / 2)
            if (minor + 3) % 12 == major { found.append((0.3, SonicTrait(kind: "relativeKey", a: nameA, b: nameB))) }
        }
        let d = Self.dims
        func gap(_ range: Range<Int>) -> Double {
            var acc = 0.0
            for k in range {
                let x = Double(Int(vectors[a * d + k]) - Int(vectors[b * d + k])) / Double(Self.scale * Self.weights[k])
                acc += x * x
            }
            return (acc / Double(range.count)).squareRoot()
        }
        for (kind, range) in [("brightness", 3..<6), ("texture", 6..<7), ("loudness", 7..<8), ("dynamics", 8..<10), ("density", 1..<2), ("timbre", 10..<22)] {
            let g = gap(range)
            if g < 0.35 { found.append((0.2 + g, SonicTrait(kind: kind))) }
        }
        return found.sorted { $0.0 < $1.0 }.prefix(3).map(\.1)
    }
}
