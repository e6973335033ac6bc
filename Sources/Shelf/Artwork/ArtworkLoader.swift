import CImageCodecs
import Dispatch
import Foundation
import ShelfCore
import ShelfDatabase

/// Pictures added by write batches that have not committed yet, by ID, so that an import can show
/// them before its commit (readers cannot see uncommitted rows).
final class PendingArtwork: Sendable {
    private let bytes = Locked<[ArtworkID: Data]>([:])
    /// Told when a batch rolls back: its pictures never existed, so loaders drop what they decoded.
    private let discardObservers = Locked<[@Sendable ([ArtworkID]) -> Void]>([])

    func register(_ id: ArtworkID, _ data: Data) { bytes.withLock { $0[id] = data } }
    func remove(_ ids: some Sequence<ArtworkID>) { bytes.withLock { for id in ids { $0[id] = nil } } }
    func data(_ id: ArtworkID) -> Data? { bytes.withLock { $0[id] } }

    func onDiscard(_ observer: @escaping @Sendable ([ArtworkID]) -> Void) { discardObservers.withLock { $0.append(observer) } }

    /// A batch that added `ids` rolled back.
    func discard(_ ids: [ArtworkID]) {
        guard !ids.isEmpty else { return }
        for observer in discardObservers.withLock({ $0 }) { observer(ids) }
    }
}

/// Counters of an `ArtworkLoader` beyond its cache's: blob reads and decodes actually run.
public struct ArtworkLoaderStats: Sendable, Equatable, Codable {
    /// Blobs read from the store (pending pictures are not reads).
    public var reads = 0
    /// Pictures taken from a batch not yet committed.
    public var pendingReads = 0
    public var decodes = 0
    /// Requests answered by joining a decode another request had started.
    public var joined = 0
}

/// Loads pictures for display: decoded to the asked size, from a bounded cache when possible,
/// otherwise read through the read pool and decoded off `LibraryActor`, at most one decode per
/// core at a time, one decode shared by identical concurrent requests.
///
/// Seed 000's rules: a cancelled task gets `CancellationError`; a request that became stale while
/// it waited (its track deleted, or showing another picture now) gets `CancellationError` whether
/// its read succeeded or failed; any other read or decode error is returned as it is.
public final class ArtworkLoader: Sendable {
    /// The decoded images this loader keeps.
    public let cache: ArtworkCache
    /// The largest picture decoded.
    public let limits: ImageLimits
    private let fetch: @Sendable (ArtworkID) async throws -> (Data, pending: Bool)
    private let isCurrent: @Sendable (ArtworkRequest) async throws -> Bool
    private let beforeRead: (@Sendable (ArtworkID) async throws -> Void)?
    private let inFlight = Locked<[ArtworkCache.Key: Task<DecodedImage, any Error>]>([:])
    private let limiter: DecodeLimiter
    private let counters = Locked(ArtworkLoaderStats())
    /// Bytes of images evicted since free memory was last handed back (an estimate).
    let freedSinceTrim = Locked(0)

    init(
        cache: ArtworkCache, limits: ImageLimits, concurrency: Int,
        fetch: @escaping @Sendable (ArtworkID) async throws -> (Data, pending: Bool),
        isCurrent: @escaping @Sendable (ArtworkRequest) async throws -> Bool,
        beforeRead: (@Sendable (ArtworkID) async throws -> Void)?
    ) {
        self.cache = cache
        self.limits = limits
        self.fetch = fetch
        self.isCurrent = isCurrent
        self.beforeRead = beforeRead
        limiter = DecodeLimiter(permits: max(1, concurrency))
    }

    /// Reads and decodes done so far.
    public var stats: ArtworkLoaderStats { counters.withLock { $0 } }

    /// The request's picture, fitting inside `maxPixelSize` × `maxPixelSize`.
    public func image(for request: ArtworkRequest, maxPixelSize: Int) async throws -> DecodedImage {
        // A request that went stale while it waited ends in CancellationError whatever the load
        // gave, so the staleness is checked before a load's own failure is reported.
        let result: Result<DecodedImage, any Error>
        do {
            result = .success(try await image(of: request.artworkID, maxPixelSize: maxPixelSize))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            result = .failure(error)
        }
        if try await !isCurrent(request) { throw CancellationError() }
        return try result.get()
    }

    /// The picture `artworkID`, fitting inside `maxPixelSize` × `maxPixelSize`, whichever track shows
    /// it: pictures are content-addressed, so the answer for an ID never changes (what a server
    /// marks immutable). `LibraryError.artworkNotFound` when no such picture is stored.
    public func image(of artworkID: ArtworkID, maxPixelSize: Int) async throws -> DecodedImage {
        try Task.checkCancellation()
        let key = ArtworkCache.Key(artworkID: artworkID, maxPixelSize: max(1, maxPixelSize))
        if let cached = cache.image(for: key) { return cached }
        let task: Task<DecodedImage, any Error> = inFlight.withLock { running in
            if let existing = running[key] {
                counters.withLock { $0.joined += 1 }
                return existing
            }
            // Unstructured on purpose: the decode belongs to every request waiting for it, so one
            // requester's cancellation must not cancel it for the others.
            let task = Task { try await self.load(key) }
            running[key] = task
            return task
        }
        let result = await task.result
        if Task.isCancelled { throw CancellationError() }
        return try result.get()
    }

    /// The request's picture as stored (JPEG or PNG bytes), under the same rules as `image`:
    /// what an export embeds. Not cached: exports read each picture once.
    public func pictureData(for request: ArtworkRequest) async throws -> Data {
        try Task.checkCancellation()
        let result: Result<Data, any Error>
        do {
            if let beforeRead { try await beforeRead(request.artworkID) }
            result = .success(try await fetch(request.artworkID).0)
        } catch {
            result = .failure(error)
        }
        if Task.isCancelled { throw CancellationError() }
        if try await !isCurrent(request) { throw CancellationError() }
        return try result.get()
    }

    private func load(_ key: ArtworkCache.Key) async throws -> DecodedImage {
        defer { _ = inFlight.withLock { $0.removeValue(forKey: key) } }
        if let beforeRead { try await beforeRead(key.artworkID) }
        let (data, pending) = try await fetch(key.artworkID)
        counters.withLock { pending ? ($0.pendingReads += 1) : ($0.reads += 1) }
        let limits = limits
        let image = try await limiter.run {
            try ImageCodec.decode(data, maxPixelSize: key.maxPixelSize, limits: limits)
        }
        counters.withLock { $0.decodes += 1 }
        let evictedBefore = cache.stats.evictions
        cache.insert(image, for: key)
        releaseMemoryIfNeeded(evicted: cache.stats.evictions - evictedBefore, cost: image.cost)
        return image
    }
}

extension ArtworkLoader {
    /// glibc keeps the pages of freed images for reuse, so a cache that keeps evicting large
    /// images grows the process by far more than its limit: once images of about 4 MiB in all
    /// have been evicted, the free pages are handed back.
    func releaseMemoryIfNeeded(evicted: Int, cost: Int) {
        guard evicted > 0 else { return }
        let due = freedSinceTrim.withLock { freed in
            freed += evicted * cost
            guard freed >= 4 << 20 else { return false }
            freed = 0
            return true
        }
        if due { shelf_release_free_memory() }
    }
}

/// At most `permits` decodes at once, each on a dispatch thread: decoding blocks in C, and the
/// cooperative pool (two threads here) must stay free for everything else.
actor DecodeLimiter {
    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(permits: Int) { available = permits }

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(with: Result { try work() }) }
        }
    }

    private func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { available += 1 } else { waiting.removeFirst().resume() }
    }
}

extension Library {
    /// A loader over this library's pictures: `cacheLimitBytes` of decoded images (32 MiB unless
    /// said otherwise). `beforeRead` runs before each blob read (tests hold reads with it).
    public func makeArtworkLoader(
        cacheLimitBytes: Int = 32 << 20, limits: ImageLimits = ImageLimits(),
        beforeRead: (@Sendable (ArtworkID) async throws -> Void)? = nil
    ) -> ArtworkLoader {
        let cache = ArtworkCache(limitBytes: cacheLimitBytes)
        pendingArtwork.onDiscard { [weak cache] ids in for id in ids { cache?.remove(artworkID: id) } }
        return ArtworkLoader(
            cache: cache, limits: limits,
            concurrency: ProcessInfo.processInfo.activeProcessorCount,
            fetch: { [weak self] id in
                guard let self else { throw CancellationError() }
                if let pending = self.pendingArtwork.data(id) { return (pending, true) }
                guard let data = try await self.artworkData(id) else { throw LibraryError.artworkNotFound(id) }
                return (data, false)
            },
            isCurrent: { [weak self] request in
                guard let self else { return false }
                if self.pendingArtwork.data(request.artworkID) != nil { return true }
                let shown = try await self.read { db in
                    try db.queryOne("SELECT artwork_id FROM track WHERE id = ?", [request.trackID.rawValue]) { try $0.get(0, as: UUID?.self) }
                }
                return shown == .some(request.artworkID.rawValue)
            },
            beforeRead: beforeRead)
    }

    /// The picture a track shows now, decoded to fit `maxPixelSize`, through the library's shared
    /// loader; nil when the track has no picture.
    public func artworkImage(trackID: TrackID, maxPixelSize: Int) async throws -> DecodedImage? {
        guard let track = try await track(trackID) else { throw LibraryError.trackNotFound(trackID) }
        guard let artworkID = track.artworkID else { return nil }
        return try await artwork.image(for: ArtworkRequest(trackID: trackID, artworkID: artworkID), maxPixelSize: maxPixelSize)
    }
}

/// What the artwork table holds.
public struct ArtworkStoreStats: Sendable, Codable, Equatable {
    /// Distinct pictures stored (each once, however many tracks show it).
    public var pictures: Int
    /// Their bytes.
    public var bytes: Int64
    /// The largest picture's bytes.
    public var largestBytes: Int64
    /// Tracks that show a picture.
    public var tracksWithArtwork: Int
    /// Pictures shown by more than one track.
    public var sharedPictures: Int
}

extension Library {
    /// Counts and sizes of the stored pictures (reads the artwork table's sizes, never its bytes).
    public func artworkStoreStats() async throws -> ArtworkStoreStats {
        try await read { db in
            let (pictures, bytes, largest) =
                try db.queryOne(
                    "SELECT count(*), coalesce(sum(byte_count), 0), coalesce(max(byte_count), 0) FROM artwork", []
                ) { (Int(try $0.int64(0)), try $0.int64(1), try $0.int64(2)) } ?? (0, 0, 0)
            let tracks = try db.scalar(Int.self, "SELECT count(*) FROM track WHERE artwork_id IS NOT NULL") ?? 0
            let shared =
                try db.scalar(
                    Int.self, "SELECT count(*) FROM (SELECT artwork_id FROM track WHERE artwork_id IS NOT NULL GROUP BY artwork_id HAVING count(*) > 1)"
                ) ?? 0
            return ArtworkStoreStats(pictures: pictures, bytes: bytes, largestBytes: largest, tracksWithArtwork: tracks, sharedPictures: shared)
        }
    }
}
