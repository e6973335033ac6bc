import Foundation
import ShelfCore
import ShelfDatabase

extension Library {
    /// Up to `count` distinct tracks drawn uniformly at random from the whole library (missing ones left out), in the
    /// order drawn. Rather than listing every ID, row IDs are drawn below the highest and kept
    /// when a track has that ID: each track is as likely as any other whatever the gaps that
    /// deletions left, and a draw costs one primary-key probe. A library whose IDs are mostly
    /// gaps (or smaller than `count`) is listed and sampled instead.
    /// Within a limited `scope`, drawn from the scope's tracks.
    public func randomTracks(_ count: Int, scope: LibraryScope = .current) async throws -> [TrackID] {
        guard count > 0 else { return [] }
        if !scope.isAll {
            let roots = scope.roots ?? []
            return try await read { db in
                let (condition, arguments) = Self.underRoots(roots)
                return try db.query("SELECT id FROM track WHERE missing_since IS NULL AND \(condition)", arguments) { try $0.int64(0) }
                    .randomSample(count).map { TrackID($0) }
            }
        }
        return try await read { db in
            try db.transaction(.deferred) {
                guard let highest = try db.queryOne("SELECT max(id) FROM track", [], { $0.optionalInt64(0) }) ?? nil, highest > 0 else { return [] }
                var generator = SystemRandomNumberGenerator()
                var picked: [TrackID] = []
                var seen = Set<Int64>()
                var attempts = 0
                let budget = count * 64 + 1_000
                if Int64(count) * 2 <= highest {
                    while picked.count < count && attempts < budget {
                        attempts += 1
                        let id = Int64.random(in: 1...highest, using: &generator)
                        guard !seen.contains(id) else { continue }
                        if try db.queryOne("SELECT 1 FROM track WHERE id = ? AND missing_since IS NULL", [id], { _ in true }) != nil {
                            seen.insert(id)
                            picked.append(TrackID(id))
                        }
                    }
                    if picked.count == count { return picked }
                }
                // Few tracks, or IDs mostly gaps: every ID, then a uniform sample of them.
                let all = try db.query("SELECT id FROM track WHERE missing_since IS NULL", [], { try $0.int64(0) })
                return all.randomSample(count).map { TrackID($0) }
            }
        }
    }
}
