import Foundation

/// `shelf serve`'s config file (TOML, see `ConfigReader`): every key optional, a key the server
/// does not know an error, each value checked where it is written so that a mistake names its
/// line. Flags given to `shelf serve` override the environment's `SHELF_*` variables, which
/// override these; these override the defaults. The keys are declared once, in `settings`.
public struct ServerConfig: Sendable, Equatable {
    /// `library`: the library directory (absolute).
    public var library: String?
    /// `listen`: `ADDR:PORT`, parsed.
    public var listen: ListenAddress?
    /// `tls-cert`: the PEM certificate for HTTPS (with `tls-key`).
    public var tlsCert: String?
    /// `tls-key`: the PEM key of `tls-cert`.
    public var tlsKey: String?
    /// `trusted-proxies`: the reverse proxies whose forwarding headers are believed.
    public var trustedProxies: [String]?
    /// `base-path`: the path everything is served under (`/music`); empty or nil: the root.
    public var basePath: String?
    /// `public-url`: the start of absolute links, base path included, without a trailing `/`.
    public var publicURL: String?
    /// `auth-header`: the header a trusted proxy names the signed-in user in.
    public var authHeader: String?
    /// `auth-header-create-users`: whether the proxy's unknown names become users.
    public var authHeaderCreateUsers: Bool?
    /// `auth-header-admin-group`: the group that makes such a new user an admin.
    public var authHeaderAdminGroup: String?
    /// `ldap-url`: the directory people may sign in through.
    public var ldapURL: String?
    /// `ldap-starttls`: whether an `ldap://` connection is upgraded with StartTLS (true unless false).
    public var ldapStartTLS: Bool?
    /// `ldap-user-dn`: the DN template with `{user}`.
    public var ldapUserDN: String?
    /// `ldap-base`: where the search for a name starts.
    public var ldapBase: String?
    /// `ldap-filter`: the search filter with `{user}`.
    public var ldapFilter: String?
    /// `ldap-bind-dn`: the service account the search binds as.
    public var ldapBindDN: String?
    /// `ldap-bind-password`: its password.
    public var ldapBindPassword: String?
    /// `ldap-admin-group`: the DN of the group whose members are admins.
    public var ldapAdminGroup: String?
    /// `ldap-ca-file`: the CA certificates the directory's certificate is checked against.
    public var ldapCAFile: String?
    /// `admin-user`: the first user made when the library has none (with `admin-password-file`).
    public var adminUser: String?
    /// `admin-password-file`: the file whose first line is that user's password.
    public var adminPasswordFile: String?
    /// `start-without-users`: whether serve starts on a library with no user (logging how to make one).
    public var startWithoutUsers: Bool?
    /// `max-transcodes`: ffmpeg transcodes at once.
    public var maxTranscodes: Int?
    /// `music`: the folders scans import from.
    public var music: [String]?
    /// `scan-interval`: how often the music folders are scanned (nil: never on a schedule; `0` or `"off"` in the file).
    public var scanInterval: ScanInterval?
    /// `purge-missing-after`: how long a track may stay missing before a scan removes it (nil or off: never).
    public var purgeMissingAfter: ScanInterval?
    /// `watch`: whether the music folders are watched for changes (inotify); true unless false.
    public var watch: Bool?
    /// `loudness`: whether the server measures the loudness of tracks without ReplayGain in the background.
    public var loudness: Bool?
    /// `analysis`: whether the server analyses tracks' sound in the background.
    public var analysis: Bool?
    /// `analysis-workers`: worker processes at once.
    public var analysisWorkers: Int?
    /// `log-format`: `text` or `json`.
    public var logFormat: ServerLog.Format?
    /// `log-file`: where the log goes instead of stderr.
    public var logFile: String?
    /// `sharing`: whether users may make public share links (and existing links open); true unless false.
    public var sharing: Bool?
    /// `subsonic-browse`: what getIndexes and getMusicDirectory walk, `folders` (on disk) or `tags`.
    public var subsonicBrowse: String?
    /// `podcast-dir`: the podcasts folder (absolute; `podcasts` in the library's directory by default).
    public var podcastDir: String?
    /// `podcast-allow-private`: whether podcast feeds and episodes on private or loopback addresses may be fetched.
    public var podcastAllowPrivate: Bool?
    /// `podcast-max-episode-size`: the largest episode downloaded, in bytes.
    public var podcastMaxEpisodeSize: Int?
    /// `podcast-refresh`: how often every podcast is refreshed (`0` or `"off"`: only on request).
    public var podcastRefresh: ScanInterval?
    /// `jukebox`: whether jukeboxControl plays on the server's audio output (through mpv).
    public var jukebox: Bool?
    /// `jukebox-audio-output`: mpv's `--ao` for the jukebox (`pulse`, `alsa`, `null`, …).
    public var jukeboxAudioOutput: String?
    /// `backup-dir`: the folder scheduled backups go into (absolute); nil: no scheduled backups.
    public var backupDir: String?
    /// `backup-keep`: how many scheduled backups are kept (the oldest beyond it are deleted).
    public var backupKeep: Int?
    /// `backup-every`: seconds between scheduled backups.
    public var backupEvery: Int?
    /// `listenbrainz-url`: the ListenBrainz API (or a compatible server's, such as Maloja's) listens are scrobbled to.
    public var listenbrainzURL: String?
    /// `lastfm-url`: the Last.fm API (Audioscrobbler 2.0) scrobbles go to.
    public var lastfmURL: String?
    /// `lastfm-api-key`: the operator's Last.fm API key; without it nobody can link Last.fm.
    public var lastfmAPIKey: String?
    /// `lastfm-secret`: the shared secret of that key, which signs every Last.fm call.
    public var lastfmSecret: String?
    /// `[presets]`: named transcodes (`mobile = "opus:96"`) a stream request may ask for by name.
    public var presets: [String: TranscodePreset] = [:]

    /// An empty config: every default.
    public init() {}

    /// The tables a file may have.
    public static let tables = ["presets"]

    /// Reads and checks `path`; throws every mistake at once.
    public static func load(path: String) throws(ConfigFileError) -> ServerConfig {
        let (config, errors) = check(ConfigReader.read(path: path), file: path)
        guard errors.isEmpty else { throw ConfigFileError(file: path, errors: errors) }
        return config
    }

    /// Reads and checks `text` as the contents of `file`; throws every mistake at once.
    public static func parse(_ text: String, file: String) throws(ConfigFileError) -> ServerConfig {
        let (config, errors) = check(ConfigReader.parse(text, file: file), file: file)
        guard errors.isEmpty else { throw ConfigFileError(file: file, errors: errors) }
        return config
    }

    /// The config a document describes and every mistake in it (syntax first, then values, by line).
    public static func check(_ document: ConfigReader.Document, file: String) -> (ServerConfig, [ConfigError]) {
        var config = ServerConfig()
        var errors = document.errors
        for table in document.tables where !tables.contains(table.name) {
            errors.append(
                ConfigError(
                    file: file, line: table.line, column: table.column,
                    reason: "unknown table [\(table.name)] (known: \(tables.map { "[\($0)]" }.joined(separator: ", ")))"))
        }
        var tlsLines: (cert: Int?, key: Int?) = (nil, nil)
        for entry in document.entries {
            let fail = { (reason: String) in errors.append(ConfigError(file: file, line: entry.line, column: entry.valueColumn, reason: reason)) }
            switch entry.table {
            case nil: break
            case "presets"?:
                do throws(ConfigValueError) {
                    config.presets[entry.key] = try TranscodePreset.parse(name: entry.key, entry.value)
                } catch {
                    fail(error.reason)
                }
                continue
            default: continue  // its header is already reported
            }
            guard let setting = setting(entry.key) else {
                errors.append(
                    ConfigError(
                        file: file, line: entry.line, column: entry.column,
                        reason: "unknown key '\(entry.key)' (known: \(settings.map(\.key).joined(separator: ", ")); presets go under [presets])"))
                continue
            }
            do throws(ConfigValueError) {
                try setting.read(entry.value, into: &config)
            } catch {
                fail(error.reason)
            }
            if entry.key == "tls-cert" { tlsLines.cert = entry.line }
            if entry.key == "tls-key" { tlsLines.key = entry.line }
        }
        switch tlsLines {
        case (let line?, nil): errors.append(ConfigError(file: file, line: line, column: 1, reason: "tls-cert needs tls-key too"))
        case (nil, let line?): errors.append(ConfigError(file: file, line: line, column: 1, reason: "tls-key needs tls-cert too"))
        default: break
        }
        errors.sort { ($0.line, $0.column) < ($1.line, $1.column) }
        return (config, errors)
    }

    /// Where `shelf serve` looks when `--config` is not given: `$XDG_CONFIG_HOME/shelf/config.toml`
    /// (else `~/.config/shelf/config.toml`) when it exists; otherwise, only when systemd started the
    /// process (`INVOCATION_ID` or `NOTIFY_SOCKET` set), `/etc/shelf/config.toml` when it exists;
    /// otherwise none.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let candidates = searchPaths(environment: environment)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The files `defaultPath` tries, in order.
    public static func searchPaths(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            base = (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.config"
        }
        var paths = [base + "/shelf/config.toml"]
        if isSystemService(environment) { paths.append(systemPath) }
        return paths
    }

    /// The system-wide file, read only by a server systemd started.
    public static let systemPath = "/etc/shelf/config.toml"

    /// Whether systemd started this process: it sets `INVOCATION_ID` for every unit it runs, and
    /// `NOTIFY_SOCKET` for `Type=notify` ones.
    public static func isSystemService(_ environment: [String: String]) -> Bool {
        !(environment["INVOCATION_ID"] ?? "").isEmpty || !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
    }
}

/// Why one value is wrong, before it is given its place in the file (or named by its flag or variable).
public struct ConfigValueError: Error, Sendable {
    /// The mistake, naming the key, flag or variable.
    public let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// An address to listen on: an IP literal and a port.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The IPv4 or IPv6 literal, without brackets.
    public var host: String
    /// The port (0: any free one).
    public var port: UInt16

    /// An address from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` with an IPv4 literal or a bracketed IPv6 one (`[::1]:4040`); nil otherwise.
    public static func parse(_ text: String) -> ListenAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else { return nil }
        return ListenAddress(host: host, port: port)
    }

    /// `127.0.0.1:4040` or `[::1]:4040`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// How often scheduled scans run: a whole number of seconds, or off.
public enum ScanInterval: Sendable, Equatable, CustomStringConvertible {
    case off
    case seconds(Int)

    /// The longest interval taken: a year. Longer ones are mistakes, not schedules (and a sleep of
    /// centuries overflows the clock arithmetic).
    public static let longest = 366 * 86_400

    /// `0`, `"off"`, a positive integer of seconds, or a string of digits with `s`, `m`, `h` or `d`;
    /// at most `longest`.
    public static func parse(_ value: ConfigValue) -> ScanInterval? {
        switch value {
        case .integer(0): return .off
        case .integer(let seconds) where seconds > 0 && seconds <= longest: return .seconds(seconds)
        case .string(let text): return parse(text)
        default: return nil
        }
    }

    /// The string forms: `"off"`, `"0"`, `"90"`, `"90s"`, `"30m"`, `"6h"`, `"1d"`.
    public static func parse(_ text: String) -> ScanInterval? {
        if text == "off" || text == "0" { return .off }
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var unit = 1
        if let last = text.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(digits), count > 0,
            count <= longest / unit
        else { return nil }
        return .seconds(count * unit)
    }

    /// The interval as a duration; nil when off.
    public var duration: Duration? {
        if case .seconds(let seconds) = self { return .seconds(seconds) }
        return nil
    }

    /// `off` or `90s`.
    public var description: String {
        if case .seconds(let seconds) = self { return "\(seconds)s" }
        return "off"
    }
}
