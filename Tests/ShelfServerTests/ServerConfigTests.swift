import Foundation
import ShelfServer
import ShelfTestSupport
import Testing

/// The config file's TOML subset and its keys: what reads, and every mistake with its line and column.
@Suite struct ServerConfigTests {
    func mistakes(_ text: String) -> [String] {
        ServerConfig.check(ConfigReader.parse(text, file: "f.toml"), file: "f.toml").1.map(\.description)
    }

    @Test func readsTheSubset() throws {
        let dir = try TemporaryDirectory()
        let text = """
            # comments, blank lines, spaces and tabs are fine

            library = "/srv/shelf"      # trailing comment
            listen =\t"[::1]:8443"
            tls-cert = '/etc/shelf/C:\\cert.pem'
            tls-key = "/etc/shelf/key\\u00e9.pem"
            max-transcodes = +1_2
            music = [
              "\(dir.url.path)",   # one
              '\(dir.url.path)',
            ]
            scan-interval = "6h"
            log-format = "json"
            log-file = "/var/log/shelf/\\"quoted\\"\\tname.log"

            [presets]
            mobile = "opus:96"
            "car stereo" = "mp3"
            lossless = "flac"
            """
        let config = try ServerConfig.parse(text, file: "f.toml")
        #expect(config.library == "/srv/shelf")
        #expect(config.listen == ListenAddress(host: "::1", port: 8443))
        #expect(config.tlsCert == "/etc/shelf/C:\\cert.pem")
        #expect(config.tlsKey == "/etc/shelf/keyé.pem")
        #expect(config.maxTranscodes == 12)
        #expect(config.music == [dir.url.path, dir.url.path])
        #expect(config.scanInterval == .seconds(6 * 3600))
        #expect(config.logFormat == .json)
        #expect(config.logFile == "/var/log/shelf/\"quoted\"\tname.log")
        #expect(config.presets["mobile"] == TranscodePreset(format: .opus, bitRate: 96))
        #expect(config.presets["car stereo"] == TranscodePreset(format: .mp3, bitRate: 128))
        #expect(config.presets["lossless"]?.format == .flac)
        // An empty file is every default.
        #expect(try ServerConfig.parse("", file: "f.toml") == ServerConfig())
        #expect(try ServerConfig.parse("# nothing\n\n", file: "f.toml") == ServerConfig())
    }

    @Test func intervalsInEveryForm() throws {
        for (text, seconds) in [("1", 1), ("\"1s\"", 1), ("90", 90), ("\"30m\"", 1800), ("\"1d\"", 86_400), ("\"45\"", 45)] {
            #expect(try ServerConfig.parse("scan-interval = \(text)", file: "f").scanInterval == .seconds(seconds), "\(text)")
        }
        for text in ["0", "\"off\"", "\"0\""] {
            #expect(try ServerConfig.parse("scan-interval = \(text)", file: "f").scanInterval == .off, "\(text)")
        }
        #expect(try ServerConfig.parse("scan-interval = \"366d\"", file: "f").scanInterval == .seconds(366 * 86_400))
        for text in ["-5", "\"5x\"", "\"s\"", "\"\"", "true", "[\"1s\"]", "9223372036854775807", "\"106751991167300d\"", "\"367d\"", "31622401"] {
            #expect(mistakes("scan-interval = \(text)").count == 1, "\(text)")
        }
    }

    @Test func syntaxMistakesNameTheirLineAndColumn() {
        let found = mistakes(
            """
            listen = "127.0.0.1:4040
            max-transcodes = 1.5
            log-format json
            = "x"
            music = ["/", 3]
            library = "/a" "/b"
            log-file = "/x\\q"
            [presets
            [[servers]]
            tls-cert = { path = "/c" }
            when = 2026-12-01
            library = "/c"
            library = "/d"
            """)
        #expect(
            found == [
                "f.toml:1:25: the string is not closed on its line (a '\"' is missing)",
                "f.toml:2:18: floating-point numbers are not supported; use a whole number or a string",
                "f.toml:3:12: expected '=' after the key 'log-format'",
                "f.toml:4:1: expected a key (letters, digits, '-' and '_'), got '='",
                "f.toml:5:15: arrays hold only strings here; got '3'",
                "f.toml:6:16: expected the end of the line after the value, got '\"'",
                "f.toml:7:15: unknown escape '\\q' (use \\\\ for a backslash)",
                "f.toml:8:9: expected ']' to close the table header",
                "f.toml:9:2: arrays of tables ([[…]]) are not supported",
                "f.toml:10:12: inline tables ({…}) are not supported; use a [table]",
                "f.toml:11:8: dates and times are not supported; quote it as a string",
                "f.toml:13:1: 'library' is already set on line 12",
            ], "\(found)")
    }

    @Test func valueMistakesAndUnknownKeys() throws {
        let dir = try TemporaryDirectory()
        let found = mistakes(
            """
            library = "relative"
            listen = "localhost:4040"
            listen-address = "127.0.0.1:1"
            max-transcodes = 0
            music = "\(dir.url.path)"
            log-format = "xml"
            tls-cert = "/etc/cert.pem"

            [presets]
            opus = "opus:96"
            tiny = "opus:8"
            [transcoding]
            max = 2
            """)
        #expect(
            found == [
                "f.toml:1:11: library expects an absolute directory path, got 'relative'",
                "f.toml:2:10: listen expects ADDR:PORT with an IP address (127.0.0.1:4040, [::1]:4040, 0.0.0.0:4040), got 'localhost:4040'",
                "f.toml:3:1: unknown key 'listen-address' (known: library, listen, tls-cert, tls-key, trusted-proxies, base-path, public-url, auth-header, auth-header-create-users, auth-header-admin-group, ldap-url, ldap-starttls, ldap-user-dn, ldap-base, ldap-filter, ldap-bind-dn, ldap-bind-password, ldap-admin-group, ldap-ca-file, admin-user, admin-password-file, start-without-users, max-transcodes, music, scan-interval, purge-missing-after, watch, loudness, analysis, analysis-workers, log-format, log-file, sharing, subsonic-browse, podcast-dir, podcast-allow-private, podcast-max-episode-size, podcast-refresh, listenbrainz-url, lastfm-url, lastfm-api-key, lastfm-secret, jukebox, jukebox-audio-output, backup-dir, backup-keep, backup-every; presets go under [presets])",
                "f.toml:4:18: max-transcodes expects an integer from 1 to 256, got 0",
                "f.toml:5:9: music expects an array of directory paths, got a string",
                "f.toml:6:14: log-format expects \"text\" or \"json\", got 'xml'",
                "f.toml:7:1: tls-cert needs tls-key too",
                "f.toml:10:8: preset 'opus' has the name of a format; name it otherwise (mobile, car, …)",
                "f.toml:11:8: preset 'tiny': the bit rate expects kbit/s from 32 to 320, got '8'",
                "f.toml:12:1: unknown table [transcoding] (known: [presets])",
            ], "\(found)")
        // The typed error carries them all, and a file that cannot be read is one mistake of the file.
        #expect(throws: ConfigFileError.self) { try ServerConfig.parse("bogus = 1\nlisten = 4", file: "f.toml") }
        do {
            _ = try ServerConfig.load(path: dir.path("missing.toml").path)
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.errors.map(\.description) == ["\(dir.path("missing.toml").path): does not exist"])
        }
        try Data([0x6C, 0x3D, 0xFF, 0xFE]).write(to: dir.path("binary.toml"))
        #expect(ConfigReader.read(path: dir.path("binary.toml").path).errors.map(\.reason) == ["is not UTF-8 text"])
    }

    @Test func backupKeysAndTheirMistakes() throws {
        let config = try ServerConfig.parse("backup-dir = \"/srv/backups\"\nbackup-keep = 3\nbackup-every = \"6h\"\n", file: "f.toml")
        #expect(config.backupDir == "/srv/backups")
        #expect(config.backupKeep == 3)
        #expect(config.backupEvery == 6 * 3600)
        #expect(try ServerConfig.parse("backup-every = 90", file: "f").backupEvery == 90)
        // Unset, they are nil: the server's defaults (no backups, 7 kept, daily) apply.
        let empty = try ServerConfig.parse("", file: "f")
        #expect(empty.backupDir == nil && empty.backupKeep == nil && empty.backupEvery == nil)
        #expect(
            mistakes("backup-dir = \"backups\"\nbackup-keep = 0\nbackup-every = \"off\"") == [
                "f.toml:1:14: backup-dir expects an absolute directory path, got 'backups'",
                "f.toml:2:15: backup-keep expects how many backups to keep, an integer of 1 or more; got 0",
                "f.toml:3:16: backup-every expects seconds (1 or more) or a string such as \"6h\" or \"1d\"; got \"off\"",
            ])
        for text in ["0", "-1", "\"1x\"", "\"367d\"", "true"] {
            #expect(mistakes("backup-every = \(text)").count == 1, "\(text)")
        }
        #expect(mistakes("backup-keep = -3").first?.contains("backup-keep expects") == true)
    }

    @Test func whereServeLooks() {
        let user = ["HOME": "/home/ann", "XDG_CONFIG_HOME": "/home/ann/.xdg"]
        #expect(ServerConfig.searchPaths(environment: user) == ["/home/ann/.xdg/shelf/config.toml"])
        #expect(ServerConfig.searchPaths(environment: ["HOME": "/home/ann"]) == ["/home/ann/.config/shelf/config.toml"])
        // Only a process systemd started falls back to the system file.
        #expect(
            ServerConfig.searchPaths(environment: ["HOME": "/var/lib/shelf", "INVOCATION_ID": "ab12"])
                == ["/var/lib/shelf/.config/shelf/config.toml", "/etc/shelf/config.toml"])
        #expect(ServerConfig.searchPaths(environment: ["HOME": "/", "NOTIFY_SOCKET": "/run/systemd/notify"]).last == "/etc/shelf/config.toml")
    }
}
