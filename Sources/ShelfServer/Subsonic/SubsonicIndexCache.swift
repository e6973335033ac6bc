import Foundation
import Shelf
import ShelfCore

/// getArtists and getIndexes answered once per library state: the whole album-artist index is
/// tens of thousands of elements at half a million tracks, and apps ask for it at every start
/// and sync while the library rarely changes in between. An entry is the rendered answer for one
/// user's artist stars and one format, with the state it is known right for (the change token,
/// read before the index, so an entry is never older than its token); getArtists' entry stays
/// right through writes that change no view row (plays, ratings, stars: the library says which).
/// A few are kept, the oldest dropped first.
final class SubsonicIndexCache: Sendable {
    struct Key: Hashable, Sendable {
        let element: String
        /// What the reader may see: each scope has its own index.
        let scope: LibraryScope
        let stars: [Int64]
        let json: Bool
        /// XML for a client older than OpenSubsonic (no `roles` children).
        var olderClient = false
    }

    /// A rendered answer and the library state it is known to be right for.
    struct Entry: Sendable {
        let token: ChangeToken
        let body: Data
        /// Whether the views held every write up to `token` when it was rendered
        /// (`Library.viewsHold`): only then may it outlive writes that change no view row.
        let settled: Bool
    }

    private let entries = Locked<[(key: Key, entry: Entry)]>([])
    private let capacity = 8

    /// The kept answer of `key` and the state it was last known right for, if kept.
    func entry(_ key: Key) -> Entry? { entries.withLock { $0.first { $0.key == key }?.entry } }

    /// Keeps `body` for `key`, right as of `token` (`settled`: the views held the token's writes).
    func store(_ key: Key, _ token: ChangeToken, _ body: Data, settled: Bool) {
        entries.withLock { entries in
            entries.removeAll { $0.key == key }
            entries.append((key, Entry(token: token, body: body, settled: settled)))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }
}
