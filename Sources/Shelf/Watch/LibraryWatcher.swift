import Foundation
import ShelfCore

/// What one batch of folder changes did to the library.
public struct WatchBatch: Sendable, Codable, Equatable {
    /// The import of the files added, rewritten or moved in (nil when none).
    public var imported: ImportReport?
    /// Tracks marked missing because their files went.
    public var missing = 0
    /// A full scan of the roots ran (the kernel dropped events, or a root came back).
    public var rescanned = false
    /// Roots found offline while handling the batch (their tracks left as they are).
    public var offline: [String] = []
}

/// Keeps a library true to its music roots while it runs: inotify events (`DirectoryWatcher`)
/// are gathered until the files settle (a file still being copied waits until its size and
/// modification time stay put), then imported as one batch, so a 20-file album is one import and an
/// editor's write-then-rename one update. Files that went mark their tracks missing; a move keeps
/// the track (the import finds it by its audio). A root that goes offline is left alone, and
/// watched and scanned again when it is back.
public final class LibraryWatcher: Sendable {
    /// A path waiting for its file to settle.
    struct Pending {
        var lastEvent: ContinuousClock.Instant
        /// Size and modification time when last looked at (nil: not yet).
        var seen: FileStamp?
        /// Created and not closed since (IN_CREATE without IN_CLOSE_WRITE): a writer still has it
        /// open, and a slow copy that pauses between writes keeps its size for a while. Waits for
        /// the close as well as for the size to settle.
        var open = false
    }

    /// How long a file created and never closed after writing waits before it is read anyway
    /// (whatever made it without writing: a hard link made by another name's tool, say).
    static let openLimit: Duration = .seconds(120)

    struct FileStamp: Equatable {
        let size: Int64
        let modified: Double
    }

    struct State {
        var pending: [String: Pending] = [:]
        /// Paths (files or folders) reported gone; judged when the batch is handled.
        var gone: Set<String> = []
        var rescan = false
        var rootsAway = false
        var watcher: DirectoryWatcher?
        /// Looks for roots that went away, until they are back (one at a time).
        var poller: Task<Void, Never>?
        var stopped = false
        var lastEvent = ContinuousClock.now
    }

    private let library: Library
    private let roots: [String]
    private let settle: Duration
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable (WatchBatch) -> Void
    private let state = Locked(State())
    private let wake: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let worker = Locked<Task<Void, Never>?>(nil)
    /// The watch limit is reported once per watcher.
    private let warnedLimit = Locked(false)

    /// A watcher of `roots` for `library`; `settle` is how long a file must stay unchanged before
    /// it is read; `changed` runs after each batch is in the library.
    public init(
        library: Library, roots: [URL], settle: Duration = .milliseconds(700), log: @escaping @Sendable (String) -> Void,
        changed: @escaping @Sendable (WatchBatch) -> Void = { _ in }
    ) {
        self.library = library
        self.roots = roots.map { Library.rootPath($0) }
        self.settle = settle
        self.log = log
        self.changed = changed
        (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The folders watched now (and those that could not be).
    public var coverage: WatchCoverage { state.withLock { $0.watcher?.coverage } ?? WatchCoverage(watchedFolders: 0) }

    /// Starts watching; returns what could be watched. Fails only when inotify itself cannot be
    /// had (the scheduled scans then stand in).
    @discardableResult
    public func start() throws -> WatchCoverage {
        let coverage = try startWatcher()
        let task = Task { [self] in await run() }
        worker.withLock { $0 = task }
        // A root not there at the start is looked for like one that went away.
        let absent = Set(roots.filter { !FileManager.default.fileExists(atPath: $0) })
        if !absent.isEmpty { startPolling(away: absent) }
        return coverage
    }

    /// Stops watching; a batch being imported finishes first.
    public func stop() async {
        let (watcher, poller) = state.withLock { state -> (DirectoryWatcher?, Task<Void, Never>?) in
            state.stopped = true
            defer { (state.watcher, state.poller) = (nil, nil) }
            return (state.watcher, state.poller)
        }
        watcher?.stop()
        poller?.cancel()
        await poller?.value
        wake.finish()
        let task = worker.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    private func startWatcher() throws -> WatchCoverage {
        let watcher = try DirectoryWatcher(roots: roots.filter { FileManager.default.fileExists(atPath: $0) }) { [weak self] events in
            self?.receive(events)
        }
        // Never a watcher after `stop`: it would hold its thread and descriptor for good.
        let (old, stopped) = state.withLock { state -> (DirectoryWatcher?, Bool) in
            if state.stopped { return (nil, true) }
            defer { state.watcher = watcher }
            return (state.watcher, false)
        }
        if stopped { return WatchCoverage(watchedFolders: 0) }
        old?.stop()
        let coverage = watcher.start()
        report(coverage)
        return coverage
    }

    /// Says once, with the number needed and the line that raises it, that some folders are
    /// left to the scheduled scans.
    private func report(_ coverage: WatchCoverage) {
        guard coverage.unwatchedCount > 0,
            !warnedLimit.withLock({ old in
                defer { old = true }
                return old
            })
        else { return }
        let needed = coverage.needed ?? (coverage.watchedFolders + coverage.unwatchedCount) * 5 / 4
        log(
            "shelf: watch: \(coverage.unwatchedCount) of \(coverage.watchedFolders + coverage.unwatchedCount) music folders cannot be watched "
                + "(fs.inotify.max_user_watches is \(coverage.limit.map(String.init) ?? "unknown")); they are left to the scheduled scans. "
                + "To watch them all: sysctl fs.inotify.max_user_watches=\(needed) (and the same in /etc/sysctl.d/local.conf)")
    }

    private func receive(_ events: [WatchEvent]) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.lastEvent = now
            for event in events {
                switch event.kind {
                case .overflow: state.rescan = true
                case .rootGone: state.rootsAway = true
                case .removed, .movedOut:
                    state.gone.insert(event.path)
                    state.pending[event.path] = nil
                case .written, .created, .movedIn, .folderAdded:
                    // Hidden files are Shelf's own edit saves and other programs' temporaries.
                    guard !URL(fileURLWithPath: event.path).lastPathComponent.hasPrefix(".") else { continue }
                    state.gone.remove(event.path)
                    state.pending[event.path, default: Pending(lastEvent: now)].lastEvent = now
                    state.pending[event.path]?.seen = nil
                    // A new hard link is a whole file that is never written: only a new file waits for its close.
                    state.pending[event.path]?.open = event.kind == .created && !Self.isHardLink(event.path)
                }
            }
        }
        wake.yield()
    }

    private func run() async {
        var iterator = signals.makeAsyncIterator()
        while await iterator.next() != nil {
            // Until every path has settled: quiet for `settle`, then sizes that stay put.
            while !Task.isCancelled {
                do { try await Task.sleep(for: settle) } catch { return }
                if state.withLock({ $0.stopped }) { return }
                let quiet = state.withLock { ContinuousClock.now - $0.lastEvent >= settle }
                guard quiet else { continue }
                let more = await handleBatch()
                if !more { break }
            }
        }
    }

    /// Handles what has settled; returns whether paths are still waiting.
    private func handleBatch() async -> Bool {
        let now = ContinuousClock.now
        let (ready, gone, rescan, rootsAway, waiting) = state.withLock { state -> ([String], Set<String>, Bool, Bool, Bool) in
            var ready: [String] = []
            for (path, pending) in state.pending where now - pending.lastEvent >= settle {
                if pending.open && now - pending.lastEvent < Self.openLimit { continue }
                let stamp = Self.stamp(path)
                if stamp == nil {
                    state.pending[path] = nil
                    state.gone.insert(path)
                } else if stamp == pending.seen {
                    // Settled, unless a writer still holds it open (a file a folder's walk found
                    // brought no IN_CREATE of its own to wait on).
                    if Self.isOpenForWriting(path) && now - pending.lastEvent < Self.openLimit { continue }
                    // A new folder's import reads every file in it: it waits for those still waiting.
                    if state.pending.keys.contains(where: { $0 != path && Library.isPath($0, under: path) }) { continue }
                    ready.append(path)
                    state.pending[path] = nil
                } else {
                    state.pending[path]?.seen = stamp
                }
            }
            defer { (state.gone, state.rescan, state.rootsAway) = ([], false, false) }
            return (ready, state.gone, state.rescan, state.rootsAway, !state.pending.isEmpty)
        }
        var batch = WatchBatch()
        do {
            if rootsAway { await watchForReturn() }
            if rescan {
                batch.rescanned = true
                try await fullScan(into: &batch)
            } else if !ready.isEmpty || !gone.isEmpty {
                try await apply(ready: ready, gone: gone, into: &batch)
            } else {
                return waiting
            }
            changed(batch)
        } catch is CancellationError {
            return false
        } catch {
            log("shelf: watch: \(error)")
        }
        return waiting
    }

    /// Imports what came and marks what went, skipping what lies on offline roots.
    private func apply(ready: [String], gone: Set<String>, into batch: inout WatchBatch) async throws {
        var files = Set<String>()
        for path in ready {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue || AudioScanner.isAudio(path) || AudioScanner.isPlaylist(path) {
                files.insert(path)
            } else if Self.sidecarExtensions.contains(AudioScanner.pathExtension(path)) {
                // A picture, lyrics or cue sheet beside audio: its folder's tracks are read again.
                files.insert((path as NSString).deletingLastPathComponent)
            }
        }
        // One removed likewise (its folder may still be there).
        for path in gone where Self.sidecarExtensions.contains(AudioScanner.pathExtension(path)) {
            let folder = (path as NSString).deletingLastPathComponent
            if FileManager.default.fileExists(atPath: folder) { files.insert(folder) }
        }
        // A file inside a folder also imported is read with it, once.
        files = files.filter { path in !files.contains { $0 != path && Library.isPath(path, under: $0) } }
        // Imports first: a file moved in takes its missing track (found by its audio) before
        // the paths that went are judged.
        if !files.isEmpty {
            let report = try await library.importFiles(at: files.sorted().map { URL(fileURLWithPath: $0) })
            batch.imported = report
        }
        guard !gone.isEmpty else { return }
        let offline = try await library.judgeRoots().filter { !$0.online }.map(\.path)
        batch.offline = offline
        var paths: [String] = []
        for path in gone where !offline.contains(where: { Library.isPath(path, under: $0) }) {
            guard !FileManager.default.fileExists(atPath: path) else { continue }
            paths.append(path)
            paths += try await library.trackPaths(under: path)
        }
        batch.missing = try await library.markMissing(paths: paths)
    }

    /// Imports every online root and judges what is missing, as a scheduled scan does.
    private func fullScan(into batch: inout WatchBatch) async throws {
        let offline = try await library.judgeRoots().filter { !$0.online }.map(\.path)
        let online = roots.filter { root in !offline.contains { Library.isPath(root, under: $0) } }
        batch.offline = offline
        if !online.isEmpty { batch.imported = try await library.importFiles(at: online.map { URL(fileURLWithPath: $0) }) }
        batch.missing = try await library.scanMissing().newlyMissing
    }

    /// A root went away (deleted, moved, unmounted): nothing of it is touched; it is looked for
    /// every two seconds, and when it is back the roots there are watched again and scanned.
    private func watchForReturn() async {
        let reports = (try? await library.judgeRoots()) ?? []
        for report in reports where !report.online && roots.contains(report.path) {
            log("shelf: watch: music root \(report.path) is offline (\(report.reason ?? "not there")); its tracks are kept as they are until it is back")
        }
        startPolling()
    }

    /// Starts the one poller for roots that are away (`away`: those to watch again when they are
    /// back; all of them after a root went, since its watches are gone). None when one runs or the
    /// watcher stopped.
    private func startPolling(away: Set<String>? = nil) {
        let away = away ?? Set(roots)
        state.withLock { state in
            guard !state.stopped, state.poller == nil else { return }
            state.poller = Task { [self] in await poll(away: away) }
        }
    }

    private func poll(away start: Set<String>) async {
        defer { state.withLock { $0.poller = nil } }
        var away = start
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(2)) } catch { return }
            guard let reports = try? await library.judgeRoots() else { continue }
            let offline = Set(reports.filter { !$0.online }.map(\.path))
            let awayNow = Set(roots.filter { !FileManager.default.fileExists(atPath: $0) || offline.contains($0) })
            // Watched again with whichever roots are there; a root still away keeps this going.
            if !away.subtracting(awayNow).isEmpty {
                log("shelf: watch: the music roots are back; watching and scanning them again")
                do { _ = try startWatcher() } catch { log("shelf: watch: \(error)") }
                state.withLock {
                    $0.rescan = true
                    $0.lastEvent = .now - settle
                }
                wake.yield()
            }
            away = awayNow
            if away.isEmpty { return }
        }
    }

    static let sidecarExtensions: Set<String> = ["jpg", "jpeg", "png", "webp", "lrc", "txt", "cue"]

    /// Whether some process has the file at `path` open for writing, as far as the kernel says: a
    /// read lease is refused (EAGAIN) exactly then. Taken and given back at once; false when a
    /// lease is not allowed here (a file of another owner without CAP_LEASE), where the size and
    /// the close event decide alone.
    static func isOpenForWriting(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        // F_SETLEASE (Linux's F_LINUX_SPECIFIC_BASE), which Glibc's module does not export.
        let setLease: Int32 = 1024
        if fcntl(descriptor, setLease, Int32(F_RDLCK)) == 0 {
            _ = fcntl(descriptor, setLease, Int32(F_UNLCK))
            return false
        }
        return errno == EAGAIN || errno == EBUSY
    }

    /// Whether the file at `path` has other names too.
    static func isHardLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_nlink > 1
    }

    static func stamp(_ path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(size: Int64(info.st_size), modified: AudioScanner.modified(info).timeIntervalSince1970)
    }
}
