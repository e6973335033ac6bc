import Foundation
import Shelf
import ShelfCore

/// getArtists and getIndexes answered once per library state: the whole album-artist index is
/// tens of thousands of elements at half a million tracks, and apps ask for it at every start
/// and sync while the library rarely changes in between. An entry is the rendered answer for one
/// state (the change token, read before the index, so an entry is never older than its key), one
/// user's artist stars and one format; a few are kept, the oldest dropped first.
final class SubsonicIndexCache: Sendable {
    struct Key: Hashable, Sendable {
        let element: String
        let transaction: Int64
        /// What the reader may see: each scope has its own index.
        let scope: LibraryScope
        let stars: [Int64]
        let json: Bool
    }

    private let entries = Locked<[(key: Key, body: Data)]>([])
    private let capacity = 8

    /// The rendered body of `key`, if kept.
    func body(_ key: Key) -> Data? { entries.withLock { $0.first { $0.key == key }?.body } }

    /// Keeps `body` for `key`.
    func store(_ key: Key, _ body: Data) {
        entries.withLock { entries in
            entries.removeAll { $0.key == key }
            entries.append((key, body))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }
}
