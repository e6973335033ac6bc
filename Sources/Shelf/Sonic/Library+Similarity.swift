import CSonic
import Foundation
import ShelfCore
import ShelfDatabase

/// The similarity index of each open library, rebuilt when analysis results or the track list
/// change; one build at a time.
actor SimilarityCache {
    private var index: SimilarityIndex?

    func index(for library: Library) async throws -> SimilarityIndex {
        let generation = try await library.read { db in
            [
                try db.scalar(Int64.self, "SELECT coalesce(max(rowid), 0) FROM sonic") ?? 0,
                try db.scalar(Int64.self, "SELECT coalesce(max(id), 0) FROM track") ?? 0,
            ]
        }
        if let index, index.generation == generation { return index }
        let built = try await library.read { db in try SimilarityIndex(db: db, generation: generation) }
        index = built
        return built
    }
}

extension Library {
    /// The current similarity index (built on first use and after analysis or imports).
    func similarityIndex() async throws -> SimilarityIndex { try await similarityCache.index(for: self) }

    /// How many tracks the similarity index holds and the bytes it keeps in memory.
    public func similarityIndexSize() async throws -> (tracks: Int, bytes: Int) {
        let index = try await similarityIndex()
        return (index.count, index.bytes)
    }

    /// Up to `count` tracks that sound most like `id`, most similar first, never the same audio
    /// in another file. With `preferVariety`, tracks of other albums and other artists come
    /// first (one a album), and the rest only fill what is missing. Tracks the current reader
    /// cannot see are left out. A track not analysed yet has no neighbours.
    public func similarTracks(to id: TrackID, count: Int, preferVariety: Bool = true) async throws -> [SonicMatch] {
        guard try await track(id) != nil else { throw LibraryError.trackNotFound(id) }
        let index = try await similarityIndex()
        guard let seed = index.row(of: id), count > 0 else { return [] }
        let distances = index.distances(from: seed)
        var limit = count * 4 + 50
        while true {
            let rows = index.nearest(to: seed, limit: limit, distances: distances)
            let visible = Set(try await tracks(ids: rows.map { TrackID(index.ids[$0]) }, fields: .withoutTexts).tracks.map(\.id.rawValue))
            let candidates = rows.filter { visible.contains(index.ids[$0]) }
            var chosen: [Int] = []
            if preferVariety {
                var albums = Set<Int32>()
                for row in candidates where chosen.count < count {
                    let album = index.album[row]
                    guard index.artist[row] != index.artist[seed], album < 0 || (album != index.album[seed] && !albums.contains(album)) else { continue }
                    albums.insert(album)
                    chosen.append(row)
                }
                let taken = Set(chosen)
                for row in candidates where chosen.count < count && !taken.contains(row) { chosen.append(row) }
            } else {
                chosen = Array(candidates.prefix(count))
            }
            // Enough found, or every row already looked at: answer, most similar first.
            if chosen.count >= count || rows.count < limit {
                return chosen.sorted { distances[$0] != distances[$1] ? distances[$0] < distances[$1] : $0 < $1 }.map { row in
                    SonicMatch(
                        track: TrackID(index.ids[row]), similarity: index.similarity(squared: distances[row], same: false), traits: index.traits(seed, row))
                }
            }
            limit *= 4
        }
    }

    /// Up to `count` tracks that sound like any of `seeds` (an album's or an artist's tracks, a
    /// play queue): the nearest few of up to 20 seeds (picked at random beyond 20), taken in
    /// turns, never a seed and never one of `excluding`.
    public func similarTracks(toAll seeds: [TrackID], count: Int, excluding: Set<TrackID> = []) async throws -> [SonicMatch] {
        guard count > 0, !seeds.isEmpty else { return [] }
        let sample = seeds.count > 20 ? Array(seeds.shuffled().prefix(20)) : seeds
        let each = max(3, count / sample.count + 2) + excluding.count
        var lists: [[SonicMatch]] = []
        for seed in sample { lists.append(try await similarTracks(to: seed, count: each)) }
        var seen = Set(seeds).union(excluding)
        var out: [SonicMatch] = []
        var round = 0
        while out.count < count, lists.contains(where: { round < $0.count }) {
            for list in lists where round < list.count && out.count < count {
                if seen.insert(list[round].track).inserted { out.append(list[round]) }
            }
            round += 1
        }
        return out
    }

    /// A path of at most `count` tracks (at least the two ends) from `start` to `end`: it begins
    /// with `start`, ends with `end`, repeats no audio, and each step is nearer `end` than the one before. The tracks in
    /// between are those nearest evenly spaced points on the line between the two. Similarity is
    /// to `start`. An empty path when either is not analysed.
    public func sonicPath(from start: TrackID, to end: TrackID, count: Int) async throws -> [SonicMatch] {
        guard try await track(start) != nil else { throw LibraryError.trackNotFound(start) }
        guard try await track(end) != nil else { throw LibraryError.trackNotFound(end) }
        let index = try await similarityIndex()
        guard let a = index.row(of: start), let b = index.row(of: end), count > 0 else { return [] }
        func match(_ row: Int, squared: Int32) -> SonicMatch {
            SonicMatch(
                track: TrackID(index.ids[row]), similarity: index.similarity(squared: squared, same: row == a),
                traits: row == a ? [] : index.traits(a, row))
        }
        if a == b || index.audio[a] == index.audio[b] { return [match(a, squared: 0)] }
        let n = index.count
        let d = SimilarityIndex.dims
        var toA = [Int32](repeating: 0, count: n)
        var toB = toA
        var dot = toA
        index.vectors.withUnsafeBufferPointer { v in
            shelf_sonic_project(
                v.baseAddress, Int64(n), Int32(d), v.baseAddress! + a * d, v.baseAddress! + b * d, &toA, &toB, &dot)
        }
        let span = Double(toB[a])
        let steps = max(0, count - 2)
        // The best few rows near each evenly spaced point between the two ends.
        let keep = 4
        var buckets = [[(cost: Double, row: Int)]](repeating: [], count: steps)
        let ends = (index.audio[a], index.audio[b])
        if steps > 0, span > 0 {
            for row in 0..<n where index.audio[row] != ends.0 && index.audio[row] != ends.1 {
                let t = Double(dot[row]) / span
                guard t > 0, t < 1 else { continue }
                let slot = Int((t * Double(steps + 1)).rounded()) - 1
                guard slot >= 0, slot < steps else { continue }
                let target = Double(slot + 1) / Double(steps + 1)
                let cost = Double(toA[row]) - 2 * target * Double(dot[row]) + target * target * span
                if buckets[slot].count < keep {
                    buckets[slot].append((cost, row))
                    buckets[slot].sort { $0.cost < $1.cost }
                } else if cost < buckets[slot][keep - 1].cost {
                    buckets[slot][keep - 1] = (cost, row)
                    buckets[slot].sort { $0.cost < $1.cost }
                }
            }
        }
        let candidates = buckets.flatMap { $0.map { TrackID(index.ids[$0.row]) } }
        let visible = Set(try await tracks(ids: candidates, fields: .withoutTexts).tracks.map(\.id.rawValue))
        var path = [match(a, squared: 0)]
        var previous = toB[a]
        var used: Set<Int32> = [index.audio[a], index.audio[b]]
        // No step may be as far as the whole jump from start to end: a point of the line whose
        // nearest tracks lie far off it is skipped rather than visited.
        let jump = toB[a]
        var last = a
        for bucket in buckets {
            guard
                let pick = bucket.first(where: {
                    toB[$0.row] < previous && !used.contains(index.audio[$0.row]) && visible.contains(index.ids[$0.row])
                        && index.squaredDistance(last, $0.row) < jump
                })
            else { continue }
            used.insert(index.audio[pick.row])
            previous = toB[pick.row]
            last = pick.row
            path.append(match(pick.row, squared: toA[pick.row]))
        }
        path.append(match(b, squared: toA[b]))
        return path
    }
}
