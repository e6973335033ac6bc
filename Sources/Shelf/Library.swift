import Foundation
import ShelfCore
import ShelfDatabase

/// A music library on disk: the public, `Sendable` entry point of the engine.
///
/// ```swift
/// let library = Library(directory: URL(fileURLWithPath: "/var/lib/shelf"))
/// let report = try await library.importFiles(at: [URL(fileURLWithPath: "/srv/music")])
/// let page = try await library.list(LibraryQuery(sort: .albumArtist), limit: 50)
/// print(report.added, page.total)
/// ```
///
/// Creating a `Library` does no I/O. The store is opened on first use, once, however many tasks
/// ask at the same moment (seed 003). Writes are serialized on `LibraryActor`; reads run on a pool
/// of read-only connections and never wait behind a write.
public final class Library: Sendable {
    /// Tunables for opening a library.
    public struct Configuration: Sendable {
        /// How long a statement waits for another process's lock before failing with `.busy`.
        public var busyTimeoutMilliseconds: Int
        /// How many read-only connections reads may use at once.
        public var readerCount: Int
        /// How much per-transaction change history `compactHistory()` keeps.
        public var historyRetention: HistoryRetention
        /// The pixel bytes the shared artwork loader's cache holds at most.
        public var artworkCacheLimitBytes: Int
        /// Whether opening the library starts (or resumes) a mirror build in the background. A
        /// short-lived process (the `shelf` command) turns it off and builds only where it means
        /// to wait, through `completeMirror`.
        public var buildsMirrorInBackground: Bool
        /// Tracks per mirror build chunk: one transaction, and the step a killed build resumes from.
        public var mirrorChunkSize: Int

        /// The defaults: a 5 s busy timeout, as many readers as cores (at least two), and history
        /// kept for 90 days or 1,000,000 entries, whichever keeps more.
        public init(
            busyTimeoutMilliseconds: Int = 5_000, readerCount: Int = max(2, ProcessInfo.processInfo.activeProcessorCount),
            historyRetention: HistoryRetention = HistoryRetention(), artworkCacheLimitBytes: Int = 32 << 20,
            buildsMirrorInBackground: Bool = true, mirrorChunkSize: Int = 5_000
        ) {
            self.buildsMirrorInBackground = buildsMirrorInBackground
            self.mirrorChunkSize = mirrorChunkSize
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.readerCount = readerCount
            self.historyRetention = historyRetention
            self.artworkCacheLimitBytes = artworkCacheLimitBytes
        }
    }

    /// The library directory (holding `library.sqlite`).
    public let directory: URL
    /// The settings this library was opened with.
    public let configuration: Configuration
    let location: StoreLocation
    let opener: StoreOpener
    /// Set once the store is open, so that reads reach the pool without a hop to `LibraryActor`.
    let openedReaders = Locked<OpenedStore?>(nil)
    /// The mirror's read pool while it is ready; nil sends queries to the direct path.
    let mirrorReaders = Locked<ReadPool?>(nil)
    /// The sonic similarity index, built on first use (`Library+Similarity`).
    let similarityCache = SimilarityCache()
    /// The views as readers limited to some libraries see them, per scope.
    let scopedGroups = ScopedGroups()
    /// The paths behind the folder IDs handed out.
    let folderNames = FolderNames()
    /// The folders walked lately.
    let folderWalks = FolderWalks()
    /// Pictures of write batches still open, visible to artwork loaders.
    let pendingArtwork = PendingArtwork()
    private let sharedLoader = Locked<ArtworkLoader?>(nil)

    /// The library's artwork loader, with its 32 MiB cache of decoded images (created on first use).
    ///
    /// ```swift
    /// if let track = try await library.track(42), let artworkID = track.artworkID {
    ///     let request = ArtworkRequest(trackID: track.id, artworkID: artworkID)
    ///     let image = try await library.artwork.image(for: request, maxPixelSize: 300)
    ///     print(image.width, image.height)
    /// }
    /// ```
    ///
    /// The cache's size is `Configuration.artworkCacheLimitBytes`.
    public var artwork: ArtworkLoader {
        sharedLoader.withLock { loader in
            if let loader { return loader }
            let created = makeArtworkLoader(cacheLimitBytes: configuration.artworkCacheLimitBytes)
            loader = created
            return created
        }
    }

    /// A library in `directory`; nothing is read or created until the first call.
    ///
    /// ```swift
    /// let library = Library(directory: Library.defaultDirectory())
    /// let small = Library(
    ///     directory: URL(fileURLWithPath: "/var/lib/shelf"),
    ///     configuration: Library.Configuration(readerCount: 2, artworkCacheLimitBytes: 8 << 20))
    /// ```
    ///
    /// - Parameters:
    ///   - directory: the library directory, holding (or to hold) `library.sqlite`; created when missing.
    ///   - configuration: the busy timeout, readers, history retention, artwork cache and mirror settings.
    public init(directory: URL, configuration: Configuration = Configuration()) {
        self.directory = directory.standardizedFileURL
        self.configuration = configuration
        self.location = StoreLocation(directory: self.directory)
        self.opener = StoreOpener()
    }

    /// The path of the canonical store, `library.sqlite`.
    public var storeURL: URL { location.storePath }

    /// The library directory used when none is given: `$SHELF_LIBRARY`, else `$XDG_DATA_HOME/shelf`,
    /// else `~/.local/share/shelf`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment["SHELF_LIBRARY"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("shelf")
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/shelf")
    }

    /// Opens the store now (it is otherwise opened by the first call); useful to surface errors early.
    ///
    /// ```swift
    /// do {
    ///     try await library.open()
    /// } catch let error as LibraryError {
    ///     print(error.code, error)  // notALibrary, newerSchema, busy, …
    /// }
    /// ```
    ///
    /// - Throws: `LibraryError`: the directory cannot be created, the file is not a Shelf library
    ///   or was written by a newer version, or another process held the lock too long.
    public func open() async throws {
        _ = try await openedStore()
    }

    /// The open store's read side, opening the store when this is the first use.
    func openedStore() async throws -> OpenedStore {
        if let opened = openedReaders.withLock({ $0 }) { return opened }
        _ = try await store()
        guard let opened = openedReaders.withLock({ $0 }) else { throw CancellationError() }
        return opened
    }

    /// The write side, opening the store when this is the first use. Publishes the read side as
    /// soon as the store is open, whoever opened it, so later reads never hop to `LibraryActor`.
    @LibraryActor
    func store() async throws -> Store {
        let store = try await opener.store(location: location, configuration: configuration)
        store.pendingArtwork = pendingArtwork
        if store.mirror == nil {
            store.mirror = MirrorStore(
                store: store, readerCount: configuration.readerCount, chunkSize: configuration.mirrorChunkSize,
                buildsInBackground: configuration.buildsMirrorInBackground
            ) { [weak self] pool in
                self?.mirrorReaders.withLock { $0 = pool }
            }
            store.mirror?.start()
        }
        openedReaders.withLock { opened in
            if opened == nil {
                opened = OpenedStore(
                    readers: store.readers, storeID: store.storeID, path: location.storePath.path,
                    busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
            }
        }
        return store
    }

    /// Runs `body` in one write transaction and returns its result. Every change it makes, and the
    /// change-log rows describing them, commit together or not at all: a throw rolls everything back.
    ///
    /// ```swift
    /// let playlist = try await library.write { batch in
    ///     let id = try batch.createPlaylist(Playlist(name: "Road trip"))
    ///     try batch.appendToPlaylist(id, [12, 13, 14])
    ///     try batch.updateTrack(12) { $0.rating = 80 }
    ///     return id
    /// }
    /// ```
    ///
    /// `body` runs on `LibraryActor`, one batch at a time, and cannot suspend: do slow work first.
    /// Reads are not blocked; they see the batch once this call returns.
    @LibraryActor @discardableResult
    public func write<T: Sendable>(_ body: @LibraryActor (WriteBatch) throws -> T) async throws -> T {
        let store = try await store()
        try Task.checkCancellation()
        return try store.write(body)
    }

    /// Runs `body` with a pooled read-only connection; for the engine's own query code.
    func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let opened = try await openedStore()
        do {
            return try await opened.readers.read(body)
        } catch {
            throw LibraryError.wrap(error, path: opened.path, busyTimeoutMilliseconds: opened.busyTimeoutMilliseconds)
        }
    }
}

/// What reads need of an open store; `Sendable`, so it can be cached outside the actor.
struct OpenedStore: Sendable {
    let readers: ReadPool
    let storeID: UUID
    let path: String
    let busyTimeoutMilliseconds: Int
}

/// Opens a library's store exactly once: concurrent first callers await the same opening task, and
/// a failed opening is forgotten so that a later call can retry (after the user fixes the cause).
@LibraryActor
final class StoreOpener: Sendable {
    private var opened: Store?
    private var opening: Task<Store, any Error>?
    /// How many times the store was actually opened (tests check that it is once).
    private(set) var openCount = 0

    nonisolated init() {}

    func store(location: StoreLocation, configuration: Library.Configuration) async throws -> Store {
        if let opened { return opened }
        if let opening { return try await opening.value }
        let task = Task { @LibraryActor in
            self.openCount += 1
            return try Store.open(location, configuration: configuration)
        }
        opening = task
        do {
            let store = try await task.value
            opened = store
            opening = nil
            return store
        } catch {
            opening = nil
            throw error
        }
    }
}

extension Library {
    /// Runs blocking work (ffmpeg's decode, a backup's copy, a whole-store check) on a plain
    /// queue, off Swift's cooperative pool, whose few threads must never wait on the disk.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Installs (or removes) a hook called before each commit of the write connection; tests use it
    /// to prove that one batch is one commit.
    @LibraryActor
    func setWriterCommitHandler(_ handler: (@Sendable () -> Void)?) async {
        try? await store().writer.setCommitHandler(handler)
    }

    /// Installs (or removes) a handler that sees the SQL of every statement the read pool runs;
    /// with `Connection.tablesRead(by:)` it proves which tables a query touched.
    func setReadTraceHandler(_ handler: (@Sendable (String) -> Void)?) async throws {
        try await openedStore().readers.setTraceHandler(handler)
    }
}
