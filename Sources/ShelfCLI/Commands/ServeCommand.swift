import CMemory
import Dispatch
import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// `shelf serve`: the library over HTTP (the native JSON API) until SIGINT or SIGTERM, set up by
/// its flags over its `SHELF_*` environment variables over its config file over the defaults
/// (one table: `ServerConfig.settings`); SIGHUP rereads the file.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract =
        "Serve the library over HTTP (JSON API, artwork, streaming, live events) until SIGINT/SIGTERM; 127.0.0.1:4040 unless --listen or the config file says otherwise."
    /// `[--config FILE]` and every setting's flag, from the settings table.
    static var synopsis: String {
        (["[--config FILE]"]
            + ServerConfig.settings.compactMap { setting -> String? in
                guard let flag = setting.flag else { return nil }
                switch setting.flagForm {
                case .none: return nil
                case .presence: return "[\(flag)]"
                case .value(let value): return "[\(flag) \(value)]"
                case .repeated(let value): return "[\(flag) \(value)]…"
                }
            }).joined(separator: " ")
    }

    /// What the flags set; nil where they are silent, so the environment, the file or the default applies.
    let flags: ServerConfig
    /// The config file read (`--config`, else the default search), nil when there is none.
    let configPath: String?
    /// The `SHELF_*` variables' settings, read once at start (a reload keeps them).
    let environment: ServerConfig
    let settings: ServerSettings

    init(arguments: inout Arguments) throws {
        var flags = ServerConfig()
        for setting in ServerConfig.settings {
            guard let flag = setting.flag else { continue }
            // A flag's text is checked as the file's value is; the mistake names the flag.
            func read(_ text: String, into config: inout ServerConfig) throws(UsageError) {
                do throws(ConfigValueError) {
                    try setting.read(text: text, name: flag, origin: .flag, into: &config)
                } catch {
                    throw UsageError(error.reason)
                }
            }
            switch setting.flagForm {
            case .none: break
            case .presence:
                if arguments.flag(flag) { try read("on", into: &flags) }
            case .value:
                if let text = try arguments.option(flag) { try read(text, into: &flags) }
            case .repeated:
                var values: [String] = []
                var one = ServerConfig()
                while let text = try arguments.firstOption(flag) {
                    try read(text, into: &one)
                    values += one.music ?? []
                }
                if !values.isEmpty { flags.music = values }
            }
        }
        if (flags.tlsCert == nil) != (flags.tlsKey == nil) { throw UsageError("--tls-cert and --tls-key go together") }
        let explicitConfig = try arguments.option("--config")
        _ = try arguments.positionals().first.map { throw UsageError("serve takes no words, got '\($0)'") }
        self.flags = flags
        do throws(SettingsEnvironmentError) {
            environment = try ServerConfig.fromEnvironment()
        } catch {
            throw UsageError(error.description)
        }
        configPath = explicitConfig ?? ServerConfig.defaultPath()
        // The file is read here, before the library opens, because it may name the library.
        let file = try configPath.map { try ServerConfig.load(path: $0) } ?? ServerConfig()
        settings = ServerSettings(flags.over(environment.over(file)))
    }

    /// The config's `library`, used when neither --library nor SHELF_LIBRARY names one.
    var libraryDirectory: URL? { settings.library.map { URL(fileURLWithPath: $0) } }

    func configure(_ configuration: inout Library.Configuration) {
        // A server stays up: the mirror is built behind it, and reads use the direct path until then.
        configuration.buildsMirrorInBackground = true
        // The caches of the store's and the mirror's writers are large for imports (32 and 64
        // MiB), and a server's writes fill them with pages it never reads again (each rating
        // appends to the change log): without one budget, RSS grows for an hour as they fill.
        Library.limitDatabaseMemory(toBytes: Self.databaseMemory)
        shelf_memory_map_from(Self.mappedBlockSize)
    }

    func run(library: Library, output: Output) async throws {
        let signals = Signals()
        let log: ServerLog
        do {
            log = try ServerLog(format: settings.logFormat, file: settings.logFile)
        } catch {
            throw CommandFailure(code: "logFile", message: (error as NSError).localizedDescription)
        }
        if (settings.adminUser == nil) != (settings.adminPasswordFile == nil) {
            throw UsageError("admin-user and admin-password-file go together: the name, and the file that holds its password")
        }
        if try await library.users().isEmpty {
            let command = "shelf --library \(library.directory.path) user add NAME --admin"
            if let name = settings.adminUser, let file = settings.adminPasswordFile {
                guard let text = FileManager.default.contents(atPath: file).map({ String(decoding: $0, as: UTF8.self) }) else {
                    throw CommandFailure(code: "adminPasswordFile", message: "admin-password-file: cannot read '\(file)'")
                }
                let password = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
                guard !password.isEmpty else {
                    throw CommandFailure(code: "adminPasswordFile", message: "admin-password-file: the first line of '\(file)' is empty")
                }
                let user = try await library.addUser(name: name, password: password, admin: true)
                log.message("shelf: made the first user, \(user.name) (the owner and an admin), from admin-user and admin-password-file")
            } else if settings.startWithoutUsers {
                log.message(
                    "shelf: no users yet; make the first (the library's owner and an admin) with: \(command) (in a container: podman exec -it CONTAINER shelf user add NAME --admin)",
                    level: "warning")
            } else {
                throw CommandFailure(code: "noUsers", message: "no users yet; create the first (it becomes the library's owner and an admin) with: \(command)")
            }
        }
        var options = ShelfServer.Options()
        options.address = settings.listen.host
        options.port = settings.listen.port
        options.maxTranscodes = settings.maxTranscodes
        options.musicRoots = settings.music
        options.musicLibraries = settings.musicLibraries
        options.scanInterval = settings.scanInterval.duration
        options.purgeMissingAfter = settings.purgeMissingAfter.duration
        options.watch = settings.watch
        options.loudness = settings.loudness
        options.analysis = settings.analysis
        options.analysisWorkers = settings.analysisWorkers
        options.transcodePresets = settings.presets
        options.sharing = settings.sharing
        options.browseFolders = settings.browseFolders
        options.proxies = TrustedProxies(settings.trustedProxies)
        options.basePath = settings.basePath
        options.publicURL = settings.publicURL
        if let header = settings.authHeader {
            // Believed from nobody, the header would sign in no one: a mistake to say at once.
            guard !settings.trustedProxies.isEmpty else {
                throw UsageError("auth-header \(header) needs trusted-proxies: the header is believed only from the proxies named there")
            }
            options.headerSignIn = HeaderSignIn(
                header: header, createUsers: settings.authHeaderCreateUsers, adminGroup: settings.authHeaderAdminGroup)
        }
        if var ldap = settings.directory {
            guard ldap.userDN != nil || ldap.base != nil else {
                throw UsageError("ldap-url needs ldap-user-dn (a DN with {user}) or ldap-base (where to search with ldap-filter)")
            }
            // A tuning knob for the tests: how long a checked password and an account stay good.
            if let text = ProcessInfo.processInfo.environment["SHELF_LDAP_CACHE_SECONDS"], let seconds = Double(text), seconds >= 0 {
                ldap.cacheSeconds = seconds
            }
            options.directory = ldap
        }
        var podcasts = PodcastSettings(
            folder: settings.podcastDir.map { URL(fileURLWithPath: $0) } ?? library.directory.appendingPathComponent("podcasts"))
        podcasts.allowPrivate = settings.podcastAllowPrivate
        if let size = settings.podcastMaxEpisodeSize { podcasts.maxEpisodeBytes = Int64(size) }
        podcasts.refreshInterval = settings.podcastRefresh.duration
        options.podcasts = podcasts
        if settings.jukebox { options.jukebox = JukeboxSettings(audioOutput: settings.jukeboxAudioOutput) }
        var backups = BackupSettings(directory: settings.backupDir.map { URL(fileURLWithPath: $0).standardizedFileURL })
        backups.keep = settings.backupKeep
        backups.every = .seconds(settings.backupEvery)
        options.backups = backups
        options.scrobbling = settings.scrobbling
        // A tuning knob (and how tests retry a stopped scrobble server within moments).
        if let text = ProcessInfo.processInfo.environment["SHELF_SCROBBLE_RETRY_MS"], let milliseconds = Double(text), milliseconds > 0 {
            options.scrobbling.retryMin = milliseconds / 1000
            options.scrobbling.retryMax = max(milliseconds / 1000, 2)
        }
        options.log = { line in log.message(line, level: Self.level(of: line)) }
        options.accessLog = { entry in log.request(entry) }
        // A tuning knob (and how tests make a stuck reader overflow quickly).
        if let text = ProcessInfo.processInfo.environment["SHELF_EVENT_BUFFER_BYTES"], let bytes = Int(text), bytes > 0 {
            options.eventBufferBytes = bytes
        }
        if let text = ProcessInfo.processInfo.environment["SHELF_EVENT_STALL_MS"], let milliseconds = Int(text), milliseconds > 0 {
            options.eventStallLimit = .milliseconds(milliseconds)
        }
        if let tls = settings.tls {
            guard let certificate = FileManager.default.contents(atPath: tls.certificate) else {
                throw UsageError("--tls-cert: cannot read '\(tls.certificate)'")
            }
            guard let key = FileManager.default.contents(atPath: tls.key) else { throw UsageError("--tls-key: cannot read '\(tls.key)'") }
            options.tls = (certificate, key)
        }
        let server = try ShelfServer(library: library, options: options)
        let notifier = ServiceNotifier()
        let address = "\(settings.tls == nil ? "http" : "https")://\(ListenAddress(host: settings.listen.host, port: server.port))"
        if let configPath { log.message("shelf: configuration from \(configPath)") }
        let reloader = Reloader(command: self, server: server, log: log, notifier: notifier)
        signals.onHangUp { reloader.reload() }
        log.message("shelf: serving \(library.directory.path) on \(address)")
        notifier.notify("READY=1\nSTATUS=serving on \(address)")
        let trimmer = Self.trimHeap(every: .seconds(30))
        await signals.waitForStop()
        trimmer.cancel()
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        log.message("shelf: stopping")
        await server.stop(grace: .seconds(10))
        log.message("shelf: stopped")
    }

    /// What SQLite may keep in the server, all connections together (measured: `shelf-bench soak`,
    /// docs/benchmarks.md). The operating system's file cache holds the rest of the files.
    static let databaseMemory: Int64 = 32 << 20

    /// The smallest block malloc serves from a mapping of its own in the server: glibc's starting
    /// threshold, pinned so that it no longer rises with the largest block freed. A page of JSON,
    /// a decoded picture or a file read then goes back to the system when freed instead of leaving
    /// a hole in an arena (`shelf-bench soak`, docs/benchmarks.md).
    static let mappedBlockSize = 128 << 10

    /// Hands what malloc holds free back to the system every `interval`. What a request frees
    /// (a page of JSON, a decoded picture) stays in its arena otherwise, in holes later blocks
    /// seldom fit, and RSS rises above the live heap for as long as the server runs.
    static func trimHeap(every interval: Duration) -> Task<Void, Never> {
        Task.detached(priority: .background) {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                shelf_memory_trim()
            }
        }
    }

    /// `error` for the lines that report one, `info` for the rest.
    static func level(of line: String) -> String {
        line.contains(" error") || line.contains("error:") || line.hasPrefix("shelf: http:") || line.hasPrefix("shelf: import failed") ? "error" : "info"
    }

    /// What SIGHUP does: reread the config file (the same one, or the default search again when
    /// there was none), keep the flags over it, and apply what can change while serving: the log
    /// format and file (reopened, for log rotation), the transcode limit and presets, the music
    /// folders, the scan interval and sharing. A file with mistakes changes nothing.
    final class Reloader: Sendable {
        private let command: ServeCommand
        private let server: ShelfServer
        private let log: ServerLog
        private let notifier: ServiceNotifier
        private let current: Locked<ServerSettings>

        init(command: ServeCommand, server: ShelfServer, log: ServerLog, notifier: ServiceNotifier) {
            (self.command, self.server, self.log, self.notifier) = (command, server, log, notifier)
            current = Locked(command.settings)
        }

        func reload() {
            notifier.notify("RELOADING=1\n\(ServiceNotifier.monotonicMicroseconds())\nSTATUS=reloading")
            defer { notifier.notify("READY=1\nSTATUS=serving") }
            let path = command.configPath ?? ServerConfig.defaultPath()
            var config = ServerConfig()
            do throws(ConfigFileError) {
                if let path { config = try ServerConfig.load(path: path) }
            } catch {
                for mistake in error.errors { log.message("shelf: reload: \(mistake)", level: "error") }
                log.message("shelf: reload failed; the running configuration stays", level: "error")
                return
            }
            let settings = ServerSettings(command.flags.over(command.environment.over(config)))
            let old = current.withLock { current in
                defer { current = settings }
                return current
            }
            do {
                try log.reconfigure(format: settings.logFormat, file: settings.logFile)
            } catch {
                log.message("shelf: reload: \((error as NSError).localizedDescription); the log stays where it was", level: "error")
            }
            server.context.streams.configure(maxTranscodes: settings.maxTranscodes, presets: settings.presets)
            server.context.scans.update(roots: settings.music, interval: settings.scanInterval.duration)
            Task { [library = server.context.library, log] in
                await ShelfServer.remember(settings.music, named: settings.musicLibraries, library: library) { log.message($0, level: "warning") }
            }
            server.context.imports.setPurgeMissingAfter(settings.purgeMissingAfter.duration)
            server.apply(watch: settings.watch, roots: settings.music, loudness: settings.loudness)
            server.context.sharing.withLock { $0 = settings.sharing }
            server.context.browseFolders.withLock { $0 = settings.browseFolders }
            let restart = settings.needsRestart(comparedTo: old)
            if !restart.isEmpty {
                log.message("shelf: reload: \(restart.joined(separator: ", ")) changed; they apply after a restart", level: "warning")
            }
            log.message(
                "shelf: reloaded \(path ?? "(no config file)"): log-format \(settings.logFormat.rawValue), max-transcodes \(settings.maxTranscodes), "
                    + "music \(settings.music.count) folder(s), scan-interval \(settings.scanInterval), sharing \(settings.sharing ? "on" : "off"), presets \(settings.presets.isEmpty ? "none" : settings.presets.keys.sorted().joined(separator: ","))"
            )
        }
    }

    /// The signals a server acts on, caught from before it starts listening (so a signal sent on
    /// seeing it ready is never lost): SIGINT or SIGTERM stop it, SIGHUP reloads.
    final class Signals: Sendable {
        private struct State {
            var stopRequested = false
            var waiter: CheckedContinuation<Void, Never>?
            var hangUp: (@Sendable () -> Void)?
        }

        private let state = Locked(State())
        private let sources = Locked<[any DispatchSourceSignal]>([])

        /// Catches SIGINT, SIGTERM and SIGHUP from now on.
        init() {
            let hangUps = DispatchQueue(label: "shelf.serve.sighup")  // one reload at a time
            for number in [SIGINT, SIGTERM, SIGHUP] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: number == SIGHUP ? hangUps : .global())
                source.setEventHandler { [state] in
                    if number == SIGHUP {
                        state.withLock { $0.hangUp }?()
                        return
                    }
                    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                        state.stopRequested = true
                        defer { state.waiter = nil }
                        return state.waiter
                    }
                    waiter?.resume()
                }
                source.resume()
                sources.withLock { $0.append(source) }
            }
        }

        /// What SIGHUP runs from now on (before this, a SIGHUP does nothing).
        func onHangUp(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.hangUp = action } }

        /// Returns at the first SIGINT or SIGTERM, at once if one came already.
        func waitForStop() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.stopRequested { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}

// The help fields, apart from the parsing above so that edits to either do not collide.
extension ServeCommand {
    static let discussion = """
        Serves the library until SIGINT or SIGTERM: the JSON API under /api/ (the command line's documents), \
        artwork, streaming with ranges and ffmpeg transcodes, live change events, and the OpenSubsonic API \
        under /rest/ for existing music apps. The read mirror is built in the background. The library needs a \
        user first (`shelf user add NAME --admin`). Settings come from the flags, then the environment \
        (SHELF_ and the config key in capitals with underscores, e.g. SHELF_MAX_TRANSCODES), then the config file \
        (--config, else $XDG_CONFIG_HOME/shelf/config.toml or ~/.config/shelf/config.toml, else, when systemd \
        started it, /etc/shelf/config.toml; check one with `shelf config check`), then the defaults; the \
        file's `library` applies when neither --library nor SHELF_LIBRARY is given. It tells systemd when it \
        is ready and when it stops (NOTIFY_SOCKET). SIGHUP rereads the file and reopens the log: the log \
        format and file, the transcode limit and presets, the music folders and the scan interval change \
        at once; the address, TLS files and library need a restart. With the file's backup-dir it backs the \
        library up into that folder every backup-every (24h unless said; the first one interval after the \
        newest backup there, or a minute after start when that is overdue) and keeps the newest backup-keep \
        (7 unless said); the admin page lists them and takes one on request.
        """
    static var flags: [FlagHelp] {
        [
            FlagHelp(
                "--config", "FILE", "The config file (TOML: see docs/config.md and `shelf config check`).",
                default: "$XDG_CONFIG_HOME/shelf/config.toml, else /etc/shelf/config.toml under systemd, else none", completes: .file)
        ]
            + ServerConfig.settings.compactMap { setting in
                setting.flag.map { flag in
                    FlagHelp(
                        flag, setting.placeholder,
                        setting.help
                            + " (\(setting.reloads ? "SIGHUP applies it" : "needs a restart"); also \(setting.environmentVariable) or `\(setting.key)` in the file)",
                        default: setting.flagForm == .presence ? nil : setting.defaultText, completes: ValueKind(setting.completion),
                        repeats: setting.flagForm == .repeated(setting.placeholder ?? ""))
                }
            }
    }
    static let examples = [
        "shelf serve", "shelf serve --listen 0.0.0.0:4040 --log-format json",
        "shelf serve --listen '[::1]:8443' --tls-cert cert.pem --tls-key key.pem",
        "shelf serve --config /etc/shelf/config.toml --music /srv/music --scan-interval 6h",
    ]
}
