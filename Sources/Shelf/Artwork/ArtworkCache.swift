import ShelfCore

/// Counters of an `ArtworkCache`, for statistics and tests.
public struct ArtworkCacheStats: Sendable, Equatable, Codable {
    public var hits = 0
    public var misses = 0
    public var evictions = 0
    /// Images returned without being kept because each alone exceeds the limit.
    public var uncacheable = 0
    public var cachedBytes = 0
    public var imagesHeld = 0
    public var limitBytes = 0
}

/// Decoded pictures keyed by artwork and size, bounded by their pixel bytes: before an insert the
/// least recently used images are evicted so that the total never exceeds the limit. Source bytes
/// are never kept; an image larger than the whole limit is handed back but not stored.
public final class ArtworkCache: Sendable {
    /// An image's identity: the same artwork decoded for the same size.
    public struct Key: Hashable, Sendable {
        public let artworkID: ArtworkID
        public let maxPixelSize: Int

        /// The key of `artworkID` decoded to fit `maxPixelSize`.
        public init(artworkID: ArtworkID, maxPixelSize: Int) {
            self.artworkID = artworkID
            self.maxPixelSize = maxPixelSize
        }
    }

    private struct Node {
        var image: DecodedImage
        var older: Key?
        var newer: Key?
    }

    private struct State {
        var nodes: [Key: Node] = [:]
        var newest: Key?
        var oldest: Key?
        var stats = ArtworkCacheStats()
    }

    private let state: Locked<State>
    /// The most pixel bytes held at once.
    public let limitBytes: Int

    /// A cache holding at most `limitBytes` of decoded pixels (32 MiB unless said otherwise).
    public init(limitBytes: Int = 32 << 20) {
        self.limitBytes = limitBytes
        var initial = State()
        initial.stats.limitBytes = limitBytes
        state = Locked(initial)
    }

    /// The image for a key, marking it most recently used; counts a hit or a miss.
    public func image(for key: Key) -> DecodedImage? {
        state.withLock { state in
            guard let node = state.nodes[key] else {
                state.stats.misses += 1
                return nil
            }
            state.stats.hits += 1
            Self.unlink(key, in: &state)
            Self.linkNewest(key, node.image, in: &state)
            return node.image
        }
    }

    /// True when the key is held (no counters move, no recency changes).
    public func contains(_ key: Key) -> Bool { state.withLock { $0.nodes[key] != nil } }

    /// Stores an image, evicting the least recently used ones first so the limit is never passed.
    public func insert(_ image: DecodedImage, for key: Key) {
        state.withLock { state in
            if state.nodes[key] != nil {
                Self.unlink(key, in: &state)
            }
            guard image.cost <= limitBytes else {
                state.stats.uncacheable += 1
                return
            }
            while state.stats.cachedBytes + image.cost > limitBytes, let oldest = state.oldest {
                Self.unlink(oldest, in: &state)
                state.stats.evictions += 1
            }
            Self.linkNewest(key, image, in: &state)
        }
    }

    /// Drops every image of one artwork (all sizes).
    public func remove(artworkID: ArtworkID) {
        state.withLock { state in
            for key in state.nodes.keys where key.artworkID == artworkID { Self.unlink(key, in: &state) }
        }
    }

    /// Drops everything; counters other than the holdings stay.
    public func removeAll() {
        state.withLock { state in
            state.nodes = [:]
            state.newest = nil
            state.oldest = nil
            state.stats.cachedBytes = 0
            state.stats.imagesHeld = 0
        }
    }

    /// The counters now.
    public var stats: ArtworkCacheStats { state.withLock { $0.stats } }

    /// Checks the bookkeeping: the byte total and count match the entries, the total is within
    /// the limit, and the recency list links every entry exactly once. Returns the problems found.
    public func invariantViolations() -> [String] {
        state.withLock { state in
            var problems: [String] = []
            let bytes = state.nodes.values.reduce(0) { $0 + $1.image.cost }
            if bytes != state.stats.cachedBytes { problems.append("cachedBytes \(state.stats.cachedBytes) but entries hold \(bytes)") }
            if state.nodes.count != state.stats.imagesHeld { problems.append("imagesHeld \(state.stats.imagesHeld) but \(state.nodes.count) entries") }
            if bytes > limitBytes { problems.append("\(bytes) bytes held over the limit of \(limitBytes)") }
            var seen = Set<Key>()
            var cursor = state.newest
            while let key = cursor {
                guard seen.insert(key).inserted, let node = state.nodes[key] else {
                    problems.append("recency list is broken at \(key)")
                    break
                }
                cursor = node.older
            }
            if seen.count != state.nodes.count { problems.append("recency list links \(seen.count) of \(state.nodes.count) entries") }
            return problems
        }
    }

    private static func unlink(_ key: Key, in state: inout State) {
        guard let node = state.nodes.removeValue(forKey: key) else { return }
        if let older = node.older { state.nodes[older]?.newer = node.newer } else { state.oldest = node.newer }
        if let newer = node.newer { state.nodes[newer]?.older = node.older } else { state.newest = node.older }
        state.stats.cachedBytes -= node.image.cost
        state.stats.imagesHeld -= 1
    }

    private static func linkNewest(_ key: Key, _ image: DecodedImage, in state: inout State) {
        state.nodes[key] = Node(image: image, older: state.newest, newer: nil)
        if let newest = state.newest { state.nodes[newest]?.newer = key } else { state.oldest = key }
        state.newest = key
        state.stats.cachedBytes += image.cost
        state.stats.imagesHeld += 1
    }
}
