import CSonic
import Foundation
import ShelfCore
import ShelfDatabase

/// The similarity index of each open library, rebuilt when analysis results or the track list
/// change (`max(rowid)` of `sonic`, `max(id)` and the row count of `track`). One build at a time:
/// while it runs (a background analysis changes the results with every file), queries are
/// answered from the index before it, unless that one lacks the track asked about; a build
/// finished is installed whatever generation it read, and the next query starts the next one.
actor SimilarityCache {
    private var index: SimilarityIndex?
    private var building: (generation: [Int64], task: Task<SimilarityIndex, any Error>)?

    private var checked: (at: Date, generation: [Int64])?

    /// The index; with `need`, one that holds that track if the build in progress will.
    func index(for library: Library, need: TrackID? = nil) async throws -> SimilarityIndex {
        // The generation is read at most once a second (counting half a million rows is a few
        // milliseconds): a query then sees analysis and imports of the last second a query later.
        let generation: [Int64]
        if let checked, Date().timeIntervalSince(checked.at) < 1 {
            generation = checked.generation
        } else {
            generation = try await library.read { db in
                [
                    try db.scalar(Int64.self, "SELECT coalesce(max(rowid), 0) FROM sonic") ?? 0,
                    try db.scalar(Int64.self, "SELECT coalesce(max(id), 0) FROM track") ?? 0,
                    try db.scalar(Int64.self, "SELECT count(*) FROM track") ?? 0,
                ]
            }
            checked = (Date(), generation)
        }
        if let index, index.generation == generation { return index }
        let task: Task<SimilarityIndex, any Error>
        if let building {
            task = building.task
        } else {
            task = Task { try await library.read { db in try SimilarityIndex(db: db, generation: generation) } }
            building = (generation, task)
            Task { await self.finish(task) }
        }
        if let index, index.count > 0, need.map({ index.row(of: $0) != nil }) ?? true { return index }
        return try await task.value
    }

    private func finish(_ task: Task<SimilarityIndex, any Error>) async {
        if let built = try? await task.value { index = built }
        building = nil
    }
}

extension Library {
    /// The current similarity index (built on first use and after analysis or imports).
    func similarityIndex(need: TrackID? = nil) async throws -> SimilarityIndex { try await similarityCache.index(for: self, need: need) }

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
        let index = try await similarityIndex(need: id)
        guard let seed = index.row(of: id), count > 0 else { return [] }
        var limit = count * 4 + 50
        let scope = LibraryScope.current
        while true {
            let near = index.nearest(to: seed, limit: limit)
            // Only a reader limited to some libraries has neighbours to leave out.
            // One file of each audio: a duplicate is the same song, not a neighbour.
            var audios = Set<Int32>()
            var candidates = near.filter { audios.insert(index.audio[$0.row]).inserted }
            if !scope.isAll {
                let visible = Set(
                    try await tracks(ids: candidates.map { TrackID(index.ids[$0.row]) }, fields: .withoutTexts).tracks.map(\.id.rawValue))
                candidates = candidates.filter { visible.contains(index.ids[$0.row]) }
            }
            var chosen: [(row: Int, squared: Int32)] = []
            if preferVariety {
                var albums = Set<Int32>()
                for item in candidates where chosen.count < count {
                    let album = index.album[item.row]
                    guard index.artist[item.row] != index.artist[seed], album < 0 || (album != index.album[seed] && !albums.contains(album)) else {
                        continue
                    }
                    albums.insert(album)
                    chosen.append(item)
                }
                let taken = Set(chosen.map(\.row))
                for item in candidates where chosen.count < count && !taken.contains(item.row) { chosen.append(item) }
            } else {
                chosen = Array(candidates.prefix(count))
            }
            // Enough found, or every row already looked at: answer, most similar first.
            if chosen.count >= count || near.count < limit {
                return chosen.sorted { $0.squared != $1.squared ? $0.squared < $1.squared : $0.row < $1.row }.map { item in
                    SonicMatch(
                        track: TrackID(index.ids[item.row]), similarity: index.similarity(squared: item.squared, same: false),
                        traits: index.traits(seed, item.row))
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
        var index = try await similarityIndex(need: start)
        if index.row(of: end) == nil { index = try await similarityIndex(need: end) }
        guard let a = index.row(of: start), let b = index.row(of: end), count > 0 else { return [] }
        func match(_ row: Int, squared: Int32) -> SonicMatch {
            SonicMatch(
                track: TrackID(index.ids[row]), similarity: index.similarity(squared: squared, same: row == a),
                traits: row == a ? [] : index.traits(a, row))
        }
        if a == b { return [match(a, squared: 0)] }
        // The same audio in two files: the path is its two ends.
        if index.audio[a] == index.audio[b] { return [match(a, squared: 0), match(b, squared: 0)] }
        let steps = max(0, count - 2)
        // The best few rows near each evenly spaced point between the two ends.
        let buckets = index.pathCandidates(from: a, to: b, steps: steps, keep: 4)
        var visible: Set<Int64>?
        if !LibraryScope.current.isAll {
            let candidates = buckets.flatMap { $0.map { TrackID(index.ids[$0]) } }
            visible = Set(try await tracks(ids: candidates, fields: .withoutTexts).tracks.map(\.id.rawValue))
        }
        var path = [match(a, squared: 0)]
        // No step may be as far as the whole jump from start to end: a point of the line whose
        // nearest tracks lie far off it is skipped rather than visited.
        let jump = index.squaredDistance(a, b)
        var previous = jump
        var used: Set<Int32> = [index.audio[a], index.audio[b]]
        var last = a
        for bucket in buckets {
            guard
                let pick = bucket.first(where: { row in
                    index.squaredDistance(row, b) < previous && !used.contains(index.audio[row])
                        && (visible?.contains(index.ids[row]) ?? true) && index.squaredDistance(last, row) < jump
                })
            else { continue }
            used.insert(index.audio[pick])
            previous = index.squaredDistance(pick, b)
            last = pick
            path.append(match(pick, squared: index.squaredDistance(a, pick)))
        }
        path.append(match(b, squared: jump))
        return path
    }
}
