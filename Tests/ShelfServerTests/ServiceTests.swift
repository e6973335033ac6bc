import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// A unix datagram socket bound by the test, standing in for systemd's notification socket.
final class NotifySocket: @unchecked Sendable {
    /// What NOTIFY_SOCKET names: the path, or `@name` for an abstract socket.
    let name: String
    private let descriptor: Int32

    /// Binds a socket at a fresh path in /tmp, or an abstract one.
    init(abstract: Bool) throws {
        let id = UUID().uuidString.prefix(8)
        name = abstract ? "@shelf-notify-test-\(id)" : "/tmp/shelf-notify-\(id).sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        // The bound of a test whose server never notifies: it fails instead of hanging.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if abstract { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (abstract ? 0 : 1))
        let status = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE) }
    }

    /// The next datagram as text; nil when none came within the bound.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
    }

    deinit {
        close(descriptor)
        if !name.hasPrefix("@") { unlink(name) }
    }
}

/// `shelf serve` as a service: systemd's readiness protocol, the config file under the flags,
/// JSON logs, SIGHUP, and scheduled scans reported in the events stream.
@Suite(.serialized) struct ServiceTests {
    /// A config file in the fixture's directory.
    func writeConfig(_ fixture: ServedLibrary, _ text: String, name: String = "config.toml") throws -> String {
        let path = fixture.root.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `sharing` reloads: off closes every link and refuses new shares at once, on opens them again.
    @Test func sharingFollowsAReload() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let config = try writeConfig(fixture, "sharing = true\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let share = try #require(((try ann.ok("createShare", [("id", "tr-1")])["shares"] as? [String: Any])?["share"] as? [[String: Any]])?.first)
            let path = try #require((share["url"] as? String).flatMap { URL(string: $0)?.path })
            let page = Curl(base: server.base)
            #expect(try page.request("GET", path).status == 200)
            for on in [false, true] {
                _ = try writeConfig(fixture, "sharing = \(on)\n")
                kill(server.process.processIdentifier, SIGHUP)
                // Only reloads log "sharing …": the first says off, the second on.
                #expect(server.waitForLine { $0.contains("reloaded \(config)") && $0.contains("sharing \(on ? "on" : "off")") } != nil)
                #expect(try page.request("GET", path).status == (on ? 200 : 404))
                if on { _ = try ann.ok("createShare", [("id", "tr-2")]) } else { #expect(try ann.errorCode("createShare", [("id", "tr-2")]) == 50) }
            }
        }
    }

    @Test(arguments: [false, true]) func readyAndStoppingReachTheNotifySocket(abstract: Bool) async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let socket = try NotifySocket(abstract: abstract)
            let server = try ServerProcess(library: fixture.library, environment: ["NOTIFY_SOCKET": socket.name])
            let ready = try #require(socket.receive())
            #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
            #expect(ready.contains("STATUS=serving on http://127.0.0.1:\(server.port)"), "\(ready)")
            // A reload is announced and then readiness again, as Type=notify expects.
            kill(server.process.processIdentifier, SIGHUP)
            let reloading = try #require(socket.receive())
            #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), "\(reloading)")
            #expect(try #require(socket.receive()).hasPrefix("READY=1"))
            #expect(server.stop() == 0)
            let stopping = try #require(socket.receive())
            #expect(stopping.split(separator: "\n").contains("STOPPING=1"), "\(stopping)")
            // The log is plain lines: stderr is a pipe here, and nothing ever colours it.
            #expect(!server.log.contains { $0.unicodeScalars.contains("\u{1B}") })
        }
    }

    @Test func flagsOverrideTheConfigFileWhichOverridesTheDefaults() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            // The file's address cannot be bound here (a documentation range) and its log is JSON: the
            // server only starts, and only logs text, because the flags win.
            let config = try writeConfig(
                fixture,
                """
                listen = "192.0.2.1:4040"   # not this machine's
                log-format = "json"
                max-transcodes = 1
                """)
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config, "--log-format", "text"])
            let serving = try #require(server.log.first { $0.contains(" on http://") })
            #expect(serving.hasPrefix("shelf: serving \(fixture.library) on http://127.0.0.1:"), "\(serving)")
            #expect(server.log.contains("shelf: configuration from \(config)"))
            #expect(server.stop() == 0)
            #expect(!server.log.contains { $0.hasPrefix("{") })

            // Without the flag, the file's log format applies; without --library or SHELF_LIBRARY,
            // the file's library does (an empty one here: the server says which and exits 2).
            let other = fixture.root.appendingPathComponent("other-library").path
            let withLibrary = try writeConfig(fixture, "library = \"\(other)\"\nlog-format = \"json\"\n", name: "library.toml")
            let shelf = ServedLibrary.shelfBinary()
            var environment = ["XDG_CONFIG_HOME": "/nonexistent-shelf-test-config", "SHELF_LIBRARY": ""]
            let fromFile = try ChildProcess.run(shelf, ["serve", "--config", withLibrary, "--listen", "127.0.0.1:0"], environment: environment)
            #expect(fromFile.status == 2)
            #expect(fromFile.stderr.contains("shelf --library \(other) user add"), "\(fromFile.stderr)")
            environment["SHELF_LIBRARY"] = fixture.library + "-env"
            let fromEnvironment = try ChildProcess.run(shelf, ["serve", "--config", withLibrary, "--listen", "127.0.0.1:0"], environment: environment)
            #expect(fromEnvironment.stderr.contains("shelf --library \(fixture.library)-env user add"), "\(fromEnvironment.stderr)")
            let fromFlag = try ChildProcess.run(
                shelf, ["--library", other + "-flag", "serve", "--config", withLibrary, "--listen", "127.0.0.1:0"], environment: environment)
            #expect(fromFlag.stderr.contains("shelf --library \(other)-flag user add"), "\(fromFlag.stderr)")

            // A mistake in the file stops the server before it starts: status 1, the file and line named.
            let broken = try writeConfig(fixture, "listen = \"127.0.0.1:0\"\nmax-transcode = 4\n", name: "broken.toml")
            let refused = try ChildProcess.run(shelf, ["--library", fixture.library, "serve", "--config", broken], environment: environment)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("\(broken):2:1: unknown key 'max-transcode'"), "\(refused.stderr)")
        }
    }

    /// Every JSON log line is one object: requests with method, masked target, status, bytes, ms
    /// and address; other events with level and message.
    @Test func jsonLogLinesParseAndSighupRereadsTheConfig() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let config = try writeConfig(fixture, "log-format = \"text\"\nmax-transcodes = 2\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            let client = Curl(base: server.base)
            _ = try client.request("GET", "/api/info?apiKey=\(key)", headers: ["Authorization": "Bearer \(key)"])
            #expect(server.waitForLine { $0.hasPrefix("GET /api/info?apiKey=***") } != nil)

            // A reloadable value changed: after SIGHUP the log is JSON and says what it reloaded.
            try Data("log-format = \"json\"\nmax-transcodes = 3\n\n[presets]\nmobile = \"opus:64\"\n".utf8).write(to: URL(fileURLWithPath: config))
            kill(server.process.processIdentifier, SIGHUP)
            let reloaded = try #require(server.waitForLine { $0.contains("reloaded \(config)") })
            let reloadObject = try #require(try JSONSerialization.jsonObject(with: Data(reloaded.utf8)) as? [String: Any], "\(reloaded)")
            #expect(reloadObject["level"] as? String == "info")
            let message = try #require(reloadObject["message"] as? String)
            #expect(message.contains("log-format json") && message.contains("max-transcodes 3") && message.contains("presets mobile"), "\(message)")

            _ = try client.request("GET", "/api/tracks?limit=1&token=secret", headers: ["Authorization": "Bearer \(key)"])
            #expect(try client.request("GET", "/api/info", headers: ["Authorization": "Bearer \(key)"]).status == 200)
            let line = try #require(server.waitForLine { $0.hasPrefix("{") && $0.contains("\"target\":\"/api/info\"") })
            let request = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(request["method"] as? String == "GET")
            #expect(request["status"] as? Int == 200)
            #expect((request["bytes"] as? Int ?? 0) > 0)
            #expect(request["ms"] is Double || request["ms"] is Int)
            #expect(request["address"] as? String == "127.0.0.1")
            #expect(request["time"] is String)
            let masked = try #require(server.waitForLine { $0.contains("/api/tracks?limit=1") })
            #expect(masked.contains("token=***") && !masked.contains("secret"), "\(masked)")

            // A file with a mistake changes nothing: the error names the line, and the log stays JSON.
            try Data("log-format = \"text\"\nmax-transcodes = \"many\"\n".utf8).write(to: URL(fileURLWithPath: config))
            kill(server.process.processIdentifier, SIGHUP)
            let failed = try #require(server.waitForLine { $0.contains("reload failed") })
            #expect(failed.hasPrefix("{"), "\(failed)")
            #expect(server.log.contains { $0.contains("\(config):2:18: max-transcodes expects an integer") }, "\(server.log)")
            #expect(try client.request("GET", "/api/info", headers: ["Authorization": "Bearer \(key)"]).status == 200)
            #expect(server.stop() == 0)
            // Every line from the reload on is one JSON object.
            let after = server.log.drop { !$0.contains("reloaded \(config)") }.filter { $0 != "<eof>" }
            #expect(after.count >= 6)
            for line in after {
                #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
            }
        }
    }

    /// The config names a music folder and a one-second interval: a file written there while the
    /// server runs is imported by a scheduled scan, and the scan's progress comes as `scan` events.
    @Test func aScheduledScanImportsANewFileWithProgressInTheEvents() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let incoming = fixture.root.appendingPathComponent("incoming")
            let staging = fixture.root.appendingPathComponent("staging")
            for folder in [incoming, staging] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let config = try writeConfig(fixture, "music = [\n  \"\(incoming.path)\",  # scanned\n]\nscan-interval = 1\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            let events = try EventClient(port: server.port, key: key, lastEventID: nil)
            defer { events.close() }
            #expect(events.next(named: "ready") != nil)

            // Written elsewhere and renamed in, so no scan ever sees half a file.
            let staged = staging.appendingPathComponent("new song.flac")
            try TestAudio.flac(seconds: 0.4, frequency: 660).write(to: staged)
            let arrived = incoming.appendingPathComponent("new song.flac")
            #expect(rename(staged.path, arrived.path) == 0)

            var sawRunning = false
            var changes = 0
            var finished: [String: Any]?
            // Scans run every second, so scan events keep coming; this many without the file is a failure.
            for _ in 0..<1000 {
                guard let event = events.next() else { break }
                if event.name == "change" { changes += 1 }
                guard event.name == "scan" else { continue }
                let status = try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: Any])
                #expect(status["paths"] as? [String] == [incoming.path])
                if status["state"] as? String == "running" { sawRunning = true }
                if status["state"] as? String == "finished", let report = status["report"] as? [String: Any], report["added"] as? Int == 1 {
                    finished = status
                    break
                }
            }
            #expect(sawRunning)
            let status = try #require(finished, "no scan imported the new file")
            #expect(status["done"] as? Int == status["total"] as? Int)
            // The insert's change event comes down the same stream as ever, before or after the scan's last report.
            if changes == 0 { #expect(events.next(named: "change") != nil) }
            let page = try Curl(base: server.base).request("GET", "/api/tracks?limit=50", headers: ["Authorization": "Bearer \(key)"])
            #expect(page.status == 200, "\(page.text)")
            let items = try #require((page.json as? [String: Any])?["items"] as? [[String: Any]])
            #expect(items.count == 2)
            #expect(items.contains { $0["path"] as? String == arrived.path }, "\(items)")
            #expect(server.log.contains { $0.hasPrefix("shelf: scan (scheduled): importing \(incoming.path)") })
            #expect(server.log.contains { $0.hasPrefix("shelf: import finished: 1 added") })
        }
    }

    /// A preset of the config file names a format and rate on both APIs; SIGHUP raises the
    /// transcode limit while a transcode holds the only slot, and the next one is let in.
    @Test func presetsStreamAndAReloadRaisesTheTranscodeLimit() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            // Ten minutes of audio, so the holder's transcode outlives the rest of the test.
            let long = fixture.root.appendingPathComponent("music/long.flac").path
            let made = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=600", "-c:a", "flac", long])
            try #require(made.status == 0, "\(made.stderr)")
            #expect(try fixture.shelf(["import", long]).status == 0)
            let key = try #require((try fixture.json(["user", "key", "ann"]) as? [String: Any])?["key"] as? String)
            let config = try writeConfig(fixture, "max-transcodes = 1\n[presets]\nmobile = \"mp3:64\"\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            let client = Curl(base: server.base)
            let auth = ["Authorization": "Bearer \(key)"]
            let native = try client.request("GET", "/api/stream/1?format=mobile", headers: auth)
            #expect(native.status == 200)
            #expect(native.headers["content-type"] == "audio/mpeg")
            #expect(native.body.count > 1000)
            let subsonic = try client.request("GET", "/rest/stream?id=tr-2&format=mobile&apiKey=\(key)")
            #expect(subsonic.status == 200)
            #expect(subsonic.headers["content-type"] == "audio/mpeg", "\(subsonic.text.prefix(300))")
            let unknown = try client.request("GET", "/api/stream/1?format=tablet", headers: auth)
            #expect(unknown.status == 400)
            #expect(unknown.text.contains("mobile"), "\(unknown.text)")

            let holder = try RawConnection(port: server.port, receiveBuffer: 4096)
            defer { holder.close() }
            try holder.send("GET /api/stream/3?format=mobile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n")
            #expect(holder.readHead().head.hasPrefix("HTTP/1.1 200"))
            #expect(try client.request("GET", "/api/stream/1?format=mobile", headers: auth).status == 429)

            try Data("max-transcodes = 2\n[presets]\nmobile = \"mp3:64\"\n".utf8).write(to: URL(fileURLWithPath: config))
            kill(server.process.processIdentifier, SIGHUP)
            #expect(server.waitForLine { $0.contains("reloaded \(config)") && $0.contains("max-transcodes 2") } != nil)
            // The holder still has its transcode running, and a second is now allowed beside it.
            #expect(ffmpegChildren(of: server.process.processIdentifier) >= 1)
            #expect(try client.request("GET", "/api/stream/1?format=mobile", headers: auth).status == 200)
        }
    }

    /// `log-file` set by a reload takes the log from stderr; after the file is moved away (a log
    /// rotation), the next SIGHUP reopens it at its path, and the moved file keeps what it had.
    @Test func sighupReopensTheLogFileAfterARotation() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let logFile = fixture.root.appendingPathComponent("shelf.log").path
            let config = try writeConfig(fixture, "log-format = \"text\"\n")
            let server = try ServerProcess(library: fixture.library, arguments: ["--config", config])
            defer { server.stop() }
            /// The file's lines once one of them holds `text` (a minute is the bound of a failed test).
            func waitForFile(_ path: String, containing text: String) -> [String]? {
                for _ in 0..<3_000 {
                    if let data = FileManager.default.contents(atPath: path) {
                        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
                        if lines.contains(where: { $0.contains(text) }) { return lines }
                    }
                    usleep(20_000)
                }
                return nil
            }
            try Data("log-format = \"text\"\nlog-file = \"\(logFile)\"\n".utf8).write(to: URL(fileURLWithPath: config))
            kill(server.process.processIdentifier, SIGHUP)
            let first = try #require(waitForFile(logFile, containing: "reloaded \(config)"))
            #expect(first.count == 1, "\(first)")
            #expect(!server.log.contains { $0.contains("reloaded") })  // not on stderr any more
            let rotated = logFile + ".1"
            #expect(rename(logFile, rotated) == 0)
            kill(server.process.processIdentifier, SIGHUP)
            let second = try #require(waitForFile(logFile, containing: "reloaded \(config)"))
            #expect(second.count == 1, "\(second)")
            #expect(try String(contentsOfFile: rotated, encoding: .utf8).split(separator: "\n").count == 1)
            // Requests are logged to the new file.
            _ = try Curl(base: server.base).request("GET", "/api/info")
            #expect(waitForFile(logFile, containing: "GET /api/info 401") != nil)
            #expect(server.stop() == 0)
            #expect(waitForFile(logFile, containing: "shelf: stopped") != nil)
        }
    }
}
