import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// What the handlers share: the library and the server's own services.
public struct ServerContext: Sendable {
    /// The library, opened once for the server's life.
    public let library: Library
    /// Pictures at the served sizes, with their encoded cache.
    public let artwork: ArtworkResponder
    /// Files and transcodes.
    public let streams: StreamResponder
    /// Live change events.
    public let events: EventHub
    /// Failed sign-ins per address.
    public let throttle: LoginThrottle
    /// Imports started over HTTP.
    public let imports: ImportJobs
    /// Scans of the music folders, scheduled and on demand (Subsonic startScan).
    public let scans: ScanScheduler
    /// Podcast channels and episodes, fetched in the background.
    public let podcasts: PodcastService
    /// Whether share links may be made and opened (`--sharing`; a reload changes it).
    public let sharing: Locked<Bool>
    /// Whether Subsonic's getIndexes and getMusicDirectory walk folders (`subsonic-browse`; a reload changes it).
    public let browseFolders = Locked(true)
    /// The server's own audio output (nil: the jukebox is off).
    public let jukebox: Jukebox?
    /// The loudness measurement: the background job and the admin page's one-off runs.
    public let loudness: LoudnessControl
    /// Backups into `backup-dir`: the schedule and the admin page's "back up now".
    public let backups: BackupControl
    /// Sign-in through an LDAP directory (`ldap-url`); nil: local users only.
    public let directory: DirectorySignIn?
    /// The scrobble outbox's sender and the now-playing notices.
    public let scrobbler: Scrobbler
    /// The sonic analysis: the background job and runs an admin starts.
    public let analysis: AnalysisService
    /// The positions of Subsonic lists remembered for deep pages, kept here so `/api/memory` can
    /// say what they hold.
    let subsonicCursors = SubsonicCursors()
    /// The music folders (`shelf serve --music`, the config's `music`): what a scan imports.
    public var musicRoots: [URL] { scans.roots }
}

/// `shelf serve`: the engine behind HTTP. It opens the library once (the mirror keeps building in
/// the background), answers the native API under `/api/`, logs one line per request, and stops
/// cleanly: no new connections, in-flight requests finish, event streams end, the library closes.
public final class ShelfServer: Sendable {
    /// How the server is set up.
    public struct Options: Sendable {
        /// The address to bind (an IP literal): `127.0.0.1` unless asked otherwise.
        public var address = "127.0.0.1"
        /// The port (0: any free one).
        public var port: UInt16 = 4040
        /// PEM certificate and key for HTTPS.
        public var tls: (certificatePEM: Data, keyPEM: Data)?
        /// Connection, header and body bounds.
        public var limits = HTTPLimits()
        /// Reverse proxies whose forwarding headers are believed (`trusted-proxies`); none by default.
        public var proxies = TrustedProxies()
        /// The path everything is served under (`base-path`: `/music`), or empty for the root.
        public var basePath = ""
        /// The start of absolute links when the proxy sends no usable host (`public-url`), without
        /// a trailing `/`; nil: from the request.
        public var publicURL: String?
        /// Sign-in by a trusted proxy's header (`auth-header`); nil: off.
        public var headerSignIn: HeaderSignIn?
        /// Sign-in through an LDAP directory (`ldap-url`); nil: off.
        public var directory: DirectorySettings?
        /// Transcodes at once (the core count unless said).
        public var maxTranscodes = ProcessInfo.processInfo.activeProcessorCount
        /// Whether share links may be made and opened (`sharing` in the config).
        public var sharing = true
        /// Whether Subsonic's getIndexes and getMusicDirectory walk folders rather than tags.
        public var browseFolders = true
        /// Bytes that may wait for an event-stream client.
        public var eventBufferBytes = 1 << 20
        /// How long an event-stream client may leave a full buffer unread before it is dropped.
        public var eventStallLimit: Duration = .seconds(10)
        /// Music folders scans import: scheduled ones (`scanInterval`) and Subsonic startScan.
        public var musicRoots: [URL] = []
        /// The library a root of `musicRoots` belongs to, by its path (`--music NAME=DIR`); a
        /// root not named here joins the first library.
        public var musicLibraries: [String: String] = [:]
        /// How long after one scheduled scan of `musicRoots` ends the next starts; nil: scans only on demand.
        public var scanInterval: Duration?
        /// How long a track may stay missing before a scan removes it; nil: never (`purge-missing-after`).
        public var purgeMissingAfter: Duration?
        /// Whether the music folders are watched for changes (`watch`).
        public var watch = true
        /// Whether tracks without ReplayGain are measured in the background (`loudness`).
        public var loudness = false
        /// Whether tracks are analysed in the background (`analysis`), by how many workers, and
        /// the worker's command (nil: this executable's `analyze-worker`).
        public var analysis = false
        public var analysisWorkers = 1
        public var analysisWorker: [String]?
        /// The jukebox's mpv and audio output; nil: no jukebox (`shelf serve --jukebox` turns it on).
        public var jukebox: JukeboxSettings?
        /// The podcasts folder and fetch limits; nil: `podcasts` inside the library's directory, defaults.
        public var podcasts: PodcastSettings?
        /// Scheduled backups (`backup-dir`, `backup-keep`, `backup-every`); no folder: none.
        public var backups = BackupSettings()
        /// Where scrobbles go (`listenbrainz-url`, `lastfm-url`) and the operator's Last.fm key.
        public var scrobbling = ScrobbleSettings()
        /// Named transcodes (the config's `[presets]`).
        public var transcodePresets: [String: TranscodePreset] = [:]
        /// Where log lines go (stderr unless said).
        public var log: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        /// Where request lines go; nil: to `log`, as text.
        public var accessLog: (@Sendable (AccessLogEntry) -> Void)?

        /// The defaults.
        public init() {}
    }

    /// The shared services.
    public let context: ServerContext
    private let http: HTTPServer
    private let log: @Sendable (String) -> Void
    /// The music folders' watcher (nil: off, or no folders).
    private let watcher = Locked<(roots: [URL], watcher: LibraryWatcher)?>(nil)
    /// Finished watchers still stopping (a reload replaced them).
    private let stopping = Locked<[Task<Void, Never>]>([])
    /// The background loudness measurement (nil: off).
    private let loudness: Locked<LoudnessJob?>

    /// What answers every request: the router, or the Subsonic API for `/rest/`.
    private let handler: @Sendable (HTTPRequest) async -> HTTPResponse

    /// The answer to `request`, exactly as a client on the socket would get it (without the
    /// connection's own limits): how in-process tests call the server's handlers.
    public func respond(_ request: HTTPRequest) async -> HTTPResponse { await handler(request) }

    /// Starts serving `library`; throws when the address cannot be bound.
    public init(library: Library, options: Options = Options()) throws {
        let events = EventHub(library: library, clientBuffer: options.eventBufferBytes, stallLimit: options.eventStallLimit)
        let log = options.log
        self.log = log
        let control = LoudnessControl(library: library, log: log, changed: { events.poke() })
        let loudness = control.background
        self.loudness = loudness
        let analysis = AnalysisService(
            library: library, enabled: options.analysis, workers: options.analysisWorkers,
            command: options.analysisWorker ?? AnalysisService.defaultCommand, log: log, changed: { events.poke() })
        let imports = ImportJobs(
            library: library,
            onChange: { status in
                events.poke()
                // The same document GET /api/import answers, as a `scan` event.
                events.publishScan((try? Wire.encode(status)) ?? Data("{}".utf8), running: status.state == "running")
                if let report = status.report, status.state == "finished" {
                    loudness.withLock { $0 }?.poke()
                    analysis.poke()
                    log(
                        "shelf: import finished: \(report.added) added, \(report.updated) updated, \(report.moved) moved, \(report.unchanged) unchanged, \(report.failed.count) failed"
                    )
                    if let scan = status.scan {
                        for root in scan.roots where !root.online {
                            log(
                                "shelf: scan: music root \(root.path) is offline (\(root.reason ?? "not there")): its \(root.tracks) tracks are kept as they are"
                            )
                        }
                        log("shelf: scan: \(scan.missing.count) missing (\(scan.newlyMissing) new), \(scan.returned) back, \(scan.pruned) purged")
                    }
                } else if status.state == "failed" {
                    log("shelf: import failed: \(status.error ?? "")")
                }
            })
        let streams = StreamResponder(library: library, maxTranscodes: options.maxTranscodes)
        streams.configure(maxTranscodes: options.maxTranscodes, presets: options.transcodePresets)
        let context = ServerContext(
            library: library, artwork: ArtworkResponder(library: library), streams: streams, events: events,
            throttle: LoginThrottle(), imports: imports,
            scans: ScanScheduler(imports: imports, roots: options.musicRoots, interval: options.scanInterval, log: log),
            podcasts: PodcastService(
                library: library, settings: options.podcasts ?? PodcastSettings(folder: library.directory.appendingPathComponent("podcasts")),
                log: log, changed: { events.poke() }),
            sharing: Locked(options.sharing),
            jukebox: options.jukebox.map { Jukebox(settings: $0, log: log) }, loudness: control,
            backups: BackupControl(library: library, settings: options.backups, log: log),
            directory: options.directory.map { DirectorySignIn($0, log: log) },
            scrobbler: Scrobbler(library: library, settings: options.scrobbling, log: log), analysis: analysis)
        self.context = context
        context.browseFolders.withLock { $0 = options.browseFolders }
        // A song the jukebox played to its end is a listen of whoever told it what to play.
        context.jukebox?.onFinished { track, user in
            Task {
                let duration = try? await library.track(track)?.duration
                let started = Date().addingTimeInterval(-(duration ?? 0))
                do {
                    _ = try await context.write { batch in
                        try batch.recordPlay(track, by: user, at: started, heard: duration, source: .jukebox, client: "jukebox")
                    }
                } catch {
                    log("shelf: jukebox: the listen of track \(track) was not kept: \(error)")
                }
            }
        }
        let base = options.basePath
        let headerSignIn = options.headerSignIn
        let router = Router(
            routes: NativeAPI(context: context).routes + WebPage(basePath: base).routes + SharePages(context: context).routes,
            authenticator: SessionAuthenticator(
                library: library, throttle: context.throttle, headerSignIn: headerSignIn, directory: context.directory, log: log), report: log)
        let subsonic = SubsonicAPI(context: context, headerSignIn: headerSignIn, report: log)
        let publicURL = options.publicURL
        // `/rest/` is the OpenSubsonic API, with its own parameters, credentials and errors.
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { incoming in
            var request = incoming
            if !base.isEmpty {
                // `/music` itself is the page's address without its slash: sent on, so the page's
                // relative links resolve under the base.
                if request.path == base {
                    return HTTPResponse(status: 308, headers: [("Location", base + "/"), ("Content-Length", "0")])
                }
                // A proxy may pass the base on (nginx's `proxy_pass` without a URI) or strip it
                // (Caddy's `handle_path`, `proxy_pass …/`): both are served; the links Shelf
                // writes carry the base either way.
                if request.path.hasPrefix(base + "/") { request.path = String(request.path.dropFirst(base.count)) }
                request.basePath = base
            }
            request.publicURL = publicURL
            return request.path.hasPrefix("/rest/") ? await subsonic.respond(request) : await router.respond(request)
        }
        self.handler = handler
        http = try HTTPServer(
            address: options.address, port: options.port, limits: options.limits, tls: options.tls, proxies: options.proxies,
            bodyLimit: { method, path in router.bodyLimit(method: method, path: path) },
            errorLog: { message in log("shelf: http: \(message.trimmingCharacters(in: .whitespacesAndNewlines))") },
            log: options.accessLog ?? { entry in log(entry.line) },
            handler: handler)
        imports.setPurgeMissingAfter(options.purgeMissingAfter)
        events.start()
        let roots = options.musicRoots
        let named = options.musicLibraries
        Task { await Self.remember(roots, named: named, library: library, log: log) }
        context.scans.start()
        context.podcasts.start()
        context.backups.start()
        context.scrobbler.start()
        context.analysis.start()
        apply(watch: options.watch, roots: options.musicRoots, loudness: options.loudness)
    }

    /// Remembers the configured roots, each in the library its entry names (made when there is
    /// none); a root that belongs to another library already is reported and left there.
    public static func remember(_ roots: [URL], named: [String: String], library: Library, log: @escaping @Sendable (String) -> Void) async {
        for root in roots {
            do {
                if let name = named[root.standardizedFileURL.path] {
                    try await library.addLibrary(name: name, roots: [root], evenIfAbsent: true)
                } else {
                    try await library.rememberRoots([root], evenIfAbsent: true)
                }
            } catch {
                log("shelf: music: \(root.path): \(error)")
            }
        }
    }

    /// Turns the folder watcher (over `roots`) and the loudness job on or off (at start and on SIGHUP).
    public func apply(watch: Bool, roots: [URL], loudness: Bool) {
        let (library, events, log, loudnessJob, analysis) = (context.library, context.events, self.log, self.loudness, context.analysis)
        let running = loudnessJob.withLock { job -> LoudnessJob? in
            defer { if !loudness { job = nil } }
            return loudness ? nil : job
        }
        if let running { stopping.withLock { $0.append(Task { await running.stop() }) } }
        if loudness, loudnessJob.withLock({ $0 == nil }) {
            let job = LoudnessJob(library: library, log: log, changed: { events.poke() })
            loudnessJob.withLock { $0 = job }
            job.start()
            log("shelf: loudness: measuring tracks without ReplayGain in the background (one at a time, niced)")
        }
        let wanted = watch && !roots.isEmpty
        let old = watcher.withLock { current -> LibraryWatcher? in
            if let current, wanted, current.roots == roots { return nil }
            defer { current = nil }
            return current?.watcher
        }
        if let old { stopping.withLock { $0.append(Task { await old.stop() }) } }
        guard wanted, watcher.withLock({ $0 == nil }) else { return }
        let new = LibraryWatcher(library: library, roots: roots, log: log) { batch in
            events.poke()
            if batch.imported.map({ $0.added + $0.updated + $0.moved > 0 }) ?? false {
                loudnessJob.withLock { $0 }?.poke()
                analysis.poke()
            }
            var parts: [String] = []
            if let report = batch.imported {
                parts.append("\(report.added) added, \(report.updated) updated, \(report.moved) moved, \(report.failed.count) failed")
            }
            if batch.missing > 0 { parts.append("\(batch.missing) missing") }
            if batch.rescanned { parts.append("rescanned") }
            if !parts.isEmpty { log("shelf: watch: \(parts.joined(separator: ", "))") }
        }
        do {
            let coverage = try new.start()
            watcher.withLock { $0 = (roots, new) }
            log("shelf: watch: watching \(coverage.watchedFolders) folders under \(roots.map(\.path).joined(separator: ", "))")
        } catch {
            log("shelf: watch: cannot watch the music folders (\(error)); the scheduled scans stand in")
        }
    }

    /// The bound port.
    public var port: UInt16 { http.port }

    /// Stops: no new connections; in-flight requests get up to `grace` to finish; event streams
    /// and transcodes end; a running import stops at its next chunk, a scheduled backup at its next step.
    public func stop(grace: Duration = .seconds(10)) async {
        context.events.close()
        context.scans.stop()
        context.podcasts.stop()
        await context.backups.stop()
        await context.scrobbler.stop()
        context.jukebox?.stop()
        if let current = watcher.withLock({ $0 }) { await current.watcher.stop() }
        if let job = loudness.withLock({ $0 }) { await job.stop() }
        await context.loudness.stopOneOff()
        await context.analysis.stop()
        for task in stopping.withLock({ $0 }) { await task.value }
        await context.imports.stop()
        http.stop(grace: grace)
    }
}

extension ServerContext {
    /// One write batch of a request, then the event streams woken: every write of both APIs goes
    /// through here, so no front end forgets to tell the live clients.
    func write<T: Sendable>(_ body: @escaping @LibraryActor @Sendable (WriteBatch) throws -> T) async throws -> T {
        let result = try await library.write(body)
        events.poke()
        scrobbler.poke()
        return result
    }
}
