import Dispatch
import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// `shelf serve`: the library over HTTP (the native JSON API) until SIGINT or SIGTERM, set up by
/// its flags over its config file over the defaults; SIGHUP rereads the file.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract =
        "Serve the library over HTTP (JSON API, artwork, streaming, live events) until SIGINT/SIGTERM; 127.0.0.1:4040 unless --listen or the config file says otherwise."
    static let synopsis =
        "[--config FILE] [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--max-transcodes N] [--music DIR]… [--scan-interval DURATION] [--watch on|off] [--purge-missing-after DURATION] [--loudness] [--sharing on|off] [--podcast-dir DIR] [--podcast-allow-private] [--jukebox] [--log-format text|json] [--log-file FILE]"

    /// What the flags set; nil (empty for `music`) where they are silent, so the file or the default applies.
    struct Flags: Sendable {
        var listen: ListenAddress?
        var tls: (certificate: String, key: String)?
        var maxTranscodes: Int?
        var music: [URL] = []
        var scanInterval: ScanInterval?
        var purgeMissingAfter: ScanInterval?
        var watch: Bool?
        var loudness = false
        var logFormat: ServerLog.Format?
        var logFile: String?
        var sharing: Bool?
        var podcastDir: String?
        var podcastAllowPrivate = false
        var jukebox = false
    }

    /// Everything the server runs with: flags over the config file over the defaults.
    struct Settings: Sendable, Equatable {
        var listen = ListenAddress(host: "127.0.0.1", port: 4040)
        var tls: TLSFiles?
        var maxTranscodes = ProcessInfo.processInfo.activeProcessorCount
        var music: [URL] = []
        var scanInterval = ScanInterval.off
        var purgeMissingAfter = ScanInterval.off
        var watch = true
        var loudness = false
        var logFormat = ServerLog.Format.text
        var logFile: String?
        var presets: [String: TranscodePreset] = [:]
        var library: String?
        var sharing = true
        var podcastDir: String?
        var podcastAllowPrivate = false
        var podcastMaxEpisodeSize: Int?
        var podcastRefresh = ScanInterval.seconds(86_400)
        var jukebox = false
        var jukeboxAudioOutput: String?
        var backupDir: String?
        var backupKeep = 7
        var backupEvery = 86_400

        /// The certificate and key files of HTTPS.
        struct TLSFiles: Sendable, Equatable {
            var certificate: String
            var key: String
        }

        /// `flags` over `config` over the defaults.
        init(flags: Flags, config: ServerConfig) {
            listen = flags.listen ?? config.listen ?? listen
            if let tls = flags.tls {
                self.tls = TLSFiles(certificate: tls.certificate, key: tls.key)
            } else if let certificate = config.tlsCert, let key = config.tlsKey {
                tls = TLSFiles(certificate: certificate, key: key)
            }
            maxTranscodes = flags.maxTranscodes ?? config.maxTranscodes ?? maxTranscodes
            music = !flags.music.isEmpty ? flags.music : (config.music ?? []).map { URL(fileURLWithPath: $0).standardizedFileURL }
            scanInterval = flags.scanInterval ?? config.scanInterval ?? scanInterval
            purgeMissingAfter = flags.purgeMissingAfter ?? config.purgeMissingAfter ?? purgeMissingAfter
            watch = flags.watch ?? config.watch ?? watch
            loudness = flags.loudness || (config.loudness ?? false)
            logFormat = flags.logFormat ?? config.logFormat ?? logFormat
            logFile = flags.logFile ?? config.logFile
            presets = config.presets
            library = config.library
            sharing = flags.sharing ?? config.sharing ?? sharing
            podcastDir = flags.podcastDir ?? config.podcastDir
            podcastAllowPrivate = flags.podcastAllowPrivate || (config.podcastAllowPrivate ?? false)
            podcastMaxEpisodeSize = config.podcastMaxEpisodeSize
            podcastRefresh = config.podcastRefresh ?? podcastRefresh
            jukebox = flags.jukebox || (config.jukebox ?? false)
            jukeboxAudioOutput = config.jukeboxAudioOutput
            backupDir = config.backupDir
            backupKeep = config.backupKeep ?? backupKeep
            backupEvery = config.backupEvery ?? backupEvery
        }

        /// What SIGHUP cannot change, named for the line that says a restart is needed.
        func needsRestart(comparedTo other: Settings) -> [String] {
            var keys: [String] = []
            if listen != other.listen { keys.append("listen") }
            if tls != other.tls { keys.append("tls-cert/tls-key") }
            if library != other.library { keys.append("library") }
            if podcastDir != other.podcastDir || podcastAllowPrivate != other.podcastAllowPrivate
                || podcastMaxEpisodeSize != other.podcastMaxEpisodeSize || podcastRefresh != other.podcastRefresh
            {
                keys.append("podcast settings")
            }
            if jukebox != other.jukebox || jukeboxAudioOutput != other.jukeboxAudioOutput { keys.append("jukebox") }
            if backupDir != other.backupDir || backupKeep != other.backupKeep || backupEvery != other.backupEvery { keys.append("backup settings") }
            return keys
        }
    }

    let flags: Flags
    /// The config file read (`--config`, else the default search), nil when there is none.
    let configPath: String?
    let settings: Settings

    init(arguments: inout Arguments) throws {
        var flags = Flags()
        if let text = try arguments.option("--listen") {
            guard let listen = ListenAddress.parse(text) else {
                throw UsageError("--listen expects ADDR:PORT with an IP address (127.0.0.1:4040, [::1]:4040, 0.0.0.0:4040), got '\(text)'")
            }
            flags.listen = listen
        }
        let certificate = try arguments.option("--tls-cert")
        let key = try arguments.option("--tls-key")
        switch (certificate, key) {
        case (let certificate?, let key?): flags.tls = (certificate, key)
        case (nil, nil): break
        default: throw UsageError("--tls-cert and --tls-key go together")
        }
        flags.maxTranscodes = try arguments.intOption("--max-transcodes", in: 1...256)
        if let text = try arguments.option("--sharing") {
            guard text == "on" || text == "off" else { throw UsageError("--sharing expects on or off, got '\(text)'") }
            flags.sharing = text == "on"
        }
        if let folder = try arguments.option("--podcast-dir") { flags.podcastDir = URL(fileURLWithPath: folder).standardizedFileURL.path }
        flags.podcastAllowPrivate = arguments.flag("--podcast-allow-private")
        flags.jukebox = arguments.flag("--jukebox")
        while let folder = try arguments.firstOption("--music") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError("--music expects a directory, got '\(folder)'")
            }
            flags.music.append(URL(fileURLWithPath: folder).standardizedFileURL)
        }
        if let text = try arguments.option("--scan-interval") {
            guard let interval = ScanInterval.parse(text) else {
                throw UsageError("--scan-interval expects seconds or a duration such as 90s, 30m, 6h or 1d (0 or off: no schedule), got '\(text)'")
            }
            flags.scanInterval = interval
        }
        if let text = try arguments.option("--purge-missing-after") {
            guard let interval = ScanInterval.parse(text) else {
                throw UsageError("--purge-missing-after expects seconds or a duration such as 30d (0 or off: never), got '\(text)'")
            }
            flags.purgeMissingAfter = interval
        }
        if let text = try arguments.option("--watch") {
            guard text == "on" || text == "off" else { throw UsageError("--watch expects on or off, got '\(text)'") }
            flags.watch = text == "on"
        }
        flags.loudness = arguments.flag("--loudness")
        if let text = try arguments.option("--log-format") {
            guard let format = ServerLog.Format(rawValue: text) else { throw UsageError("--log-format expects text or json, got '\(text)'") }
            flags.logFormat = format
        }
        if let file = try arguments.option("--log-file") { flags.logFile = URL(fileURLWithPath: file).standardizedFileURL.path }
        let explicitConfig = try arguments.option("--config")
        _ = try arguments.positionals().first.map { throw UsageError("serve takes no words, got '\($0)'") }
        self.flags = flags
        configPath = explicitConfig ?? ServerConfig.defaultPath()
        // The file is read here, before the library opens, because it may name the library.
        settings = Settings(flags: flags, config: try configPath.map { try ServerConfig.load(path: $0) } ?? ServerConfig())
    }

    /// The config's `library`, used when neither --library nor SHELF_LIBRARY names one.
    var libraryDirectory: URL? { settings.library.map { URL(fileURLWithPath: $0) } }

    func configure(_ configuration: inout Library.Configuration) {
        // A server stays up: the mirror is built behind it, and reads use the direct path until then.
        configuration.buildsMirrorInBackground = true
    }

    func run(library: Library, output: Output) async throws {
        let signals = Signals()
        let log: ServerLog
        do {
            log = try ServerLog(format: settings.logFormat, file: settings.logFile)
        } catch {
            throw CommandFailure(code: "logFile", message: (error as NSError).localizedDescription)
        }
        if try await library.users().isEmpty {
            throw CommandFailure(
                code: "noUsers",
                message:
                    "no users yet; create the first (it becomes the library's owner and an admin) with: shelf --library \(library.directory.path) user add NAME --admin"
            )
        }
        var options = ShelfServer.Options()
        options.address = settings.listen.host
        options.port = settings.listen.port
        options.maxTranscodes = settings.maxTranscodes
        options.musicRoots = settings.music
        options.scanInterval = settings.scanInterval.duration
        options.purgeMissingAfter = settings.purgeMissingAfter.duration
        options.watch = settings.watch
        options.loudness = settings.loudness
        options.transcodePresets = settings.presets
        options.sharing = settings.sharing
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
        await signals.waitForStop()
        notifier.notify("STOPPING=1\nSTATUS=stopping")
        log.message("shelf: stopping")
        await server.stop(grace: .seconds(10))
        log.message("shelf: stopped")
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
        private let current: Locked<Settings>

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
            let settings = Settings(flags: command.flags, config: config)
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
            server.context.imports.setPurgeMissingAfter(settings.purgeMissingAfter.duration)
            server.apply(watch: settings.watch, roots: settings.music, loudness: settings.loudness)
            server.context.sharing.withLock { $0 = settings.sharing }
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
        user first (`shelf user add NAME --admin`). Settings come from the flags, then the config file \
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
    static let flags = [
        FlagHelp(
            "--config", "FILE", "The config file (TOML: see README and `shelf config check`).",
            default: "$XDG_CONFIG_HOME/shelf/config.toml, else /etc/shelf/config.toml under systemd, else none", completes: .file),
        FlagHelp("--listen", "ADDR:PORT", "The address to listen on (an IPv4 literal, or IPv6 in brackets).", default: "127.0.0.1:4040"),
        FlagHelp("--tls-cert", "FILE", "Serve HTTPS with this PEM certificate (with --tls-key).", completes: .file),
        FlagHelp("--tls-key", "FILE", "The PEM private key of --tls-cert.", completes: .file),
        FlagHelp("--max-transcodes", "N", "The most ffmpeg transcodes at once (1 to 256).", default: "the number of cores"),
        FlagHelp(
            "--music", "DIR", "A music folder that scans import from (repeatable; replaces the config's `music`).",
            default: "none (startScan is refused)", completes: .directory, repeats: true),
        FlagHelp(
            "--scan-interval", "DURATION",
            "Scan the music folders at start and this long after each scan ends (seconds, or 90s, 30m, 6h, 1d; 0 or off: only on startScan).",
            default: "off"),
        FlagHelp(
            "--log-format", "text|json", "One plain line per event, or one JSON object per line.", default: "text",
            completes: .choices(ServerLog.Format.allCases.map(\.rawValue))),
        FlagHelp("--watch", "on|off", "Watch the music folders (inotify) and import what changes within seconds.", default: "on"),
        FlagHelp(
            "--purge-missing-after", "DURATION",
            "Remove tracks missing this long (seconds, or 30d; 0 or off: never); an offline root's tracks never are.", default: "off"),
        FlagHelp("--loudness", nil, "Measure the loudness of tracks without ReplayGain in the background (EBU R128, one at a time, niced)."),
        FlagHelp(
            "--sharing", "on|off", "Whether users may make public share links; off also closes the existing ones.", default: "on",
            completes: .choices(["on", "off"])),
        FlagHelp(
            "--podcast-dir", "DIR", "Where podcast episodes and channel pictures are downloaded (one folder per channel).",
            default: "podcasts in the library directory", completes: .directory),
        FlagHelp(
            "--podcast-allow-private", nil,
            "Allow podcast feeds and episodes on private, loopback and link-local addresses (refused otherwise, so a feed URL cannot reach the server's own network)."
        ),
        FlagHelp("--jukebox", nil, "Play on the server's own audio output through mpv when admins or users with the jukebox role ask (jukeboxControl)."),
        FlagHelp("--log-file", "FILE", "Append the log to FILE instead of stderr (reopened on SIGHUP, for log rotation).", default: "stderr", completes: .file),
    ]
    static let examples = [
        "shelf serve", "shelf serve --listen 0.0.0.0:4040 --log-format json",
        "shelf serve --listen '[::1]:8443' --tls-cert cert.pem --tls-key key.pem",
        "shelf serve --config /etc/shelf/config.toml --music /srv/music --scan-interval 6h",
    ]
}
