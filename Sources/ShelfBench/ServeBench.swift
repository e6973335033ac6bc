import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import ShelfWire

/// `shelf-bench serve`: `shelf serve` as a child process, driven by `wrk` over loopback, each
/// scenario beside the same read made in-process, plus the server's peak RSS.
struct ServeBench {
    let directory: URL
    let tracks: Int
    let connections: Int
    let duration: Int
    let threads: Int
    let wrk: String

    /// Reads the command's flags.
    init(_ words: [String]) throws {
        (directory, tracks, connections, duration, threads, wrk) = try Self.serverFlags(words, connections: 64, duration: 10)
    }

    /// The flags the server benchmarks share (`serve`, `subsonic`), with their own defaults for
    /// connections and seconds.
    static func serverFlags(_ words: [String], connections: Int, duration: Int) throws
        -> (directory: URL, tracks: Int, connections: Int, duration: Int, threads: Int, wrk: String)
    {
        let flags = try Flags(words, known: ["--library", "--tracks", "--connections", "--duration", "--threads", "--wrk"])
        guard let path = flags.string("--library") else { throw BenchUsageError(message: "--library is required") }
        let connections = max(1, try flags.int("--connections", default: connections))
        return (
            URL(fileURLWithPath: path), max(1, try flags.int("--tracks", default: 500_500)), connections,
            max(1, try flags.int("--duration", default: duration)), max(1, min(try flags.int("--threads", default: 2), connections)),
            flags.string("--wrk") ?? "/usr/bin/wrk"
        )
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("serve: \(text)\n".utf8)) }

    /// One load: what every request of a scenario asks for, and what the engine does for it in-process.
    struct Scenario {
        let name: String
        let key: String
        /// Cycled through, each wrk thread striding over them (so a list of distinct paths is
        /// requested once each until it wraps).
        let paths: [String]
        /// The endpoint's engine calls, timed in-process (nil: not comparable).
        let engine: (@Sendable () async throws -> Void)?
        /// The engine calls plus the document and its JSON encoding, as the handler builds it.
        let handler: (@Sendable () async throws -> Void)?
    }

    /// What wrk's `done` function printed for one run.
    struct Load {
        var requests = 0
        var seconds = 0.0
        var statusErrors = 0
        var socketErrors = 0
        var p50Ms = 0.0
        var p99Ms = 0.0

        /// Completed requests over the run's own measured duration.
        var requestsPerSecond: Double { Double(requests) / max(seconds, 1e-9) }
    }

    /// Prepares the library, measures in-process, then runs the server under wrk and fills `results`.
    func run(_ results: inout Report) async throws {
        guard FileManager.default.isExecutableFile(atPath: wrk) else {
            throw BenchUsageError(message: "\(wrk) not found: install the Debian package wrk (make deps)")
        }
        let shelf = try Self.shelfBinary()
        let (library, key) = try await Self.openLibrary(directory, tracks: tracks, log: log)
        let count = try await library.info().trackCount

        // 2. The inputs: the cursor at 90 %, album IDs, artwork IDs, a search word that hits.
        let query = try Parameters.query(sort: "artist", sortTags: nil, filter: try Parameters.filter(""))
        let deep = max(0, count * 9 / 10 - 1)
        guard let cursor = try await library.list(query, offset: deep, limit: 1).nextCursor else {
            throw BenchUsageError(message: "no cursor at offset \(deep) of \(count)")
        }
        var albums: [GroupItem] = []
        var after: PageCursor?
        repeat {
            let page = try await library.groups(GroupQuery(kind: .album), after: after, limit: 10_000)
            albums += page.items
            after = page.nextCursor
        } while after != nil
        var seen = Set<ArtworkID>()
        let artworkIDs = albums.compactMap(\.artworkID).filter { seen.insert($0).inserted }
        guard artworkIDs.count >= 4 else { throw BenchUsageError(message: "only \(artworkIDs.count) pictures; use more --tracks") }
        // 50 warm pictures, 200 for the in-process cold reads, and every other one for the server's cold run
        // (a quarter each at tiny scales).
        let warmIDs = Array(artworkIDs.prefix(min(50, artworkIDs.count / 4)))
        let inProcessColdIDs = Array(artworkIDs.suffix(min(200, artworkIDs.count / 4)))
        let coldIDs = Array(artworkIDs.dropFirst(warmIDs.count).dropLast(inProcessColdIDs.count))
        let albumIDs = Array(albums.prefix(100).map(\.id))
        let word = "river"
        let hits = try await library.search(word, limit: 1).total
        guard hits > 0 else { throw BenchUsageError(message: "no track matches '\(word)'") }
        // M, unless a tiny library has nothing there: then its largest section.
        let sections = try await library.sections(query)
        guard let section = sections.contains(where: { $0.name == "M" && $0.count > 0 }) ? "M" : sections.max(by: { $0.count < $1.count })?.name
        else { throw BenchUsageError(message: "the library has no sections") }

        let scenarios = makeScenarios(
            library, query: query, cursor: cursor, section: section, word: word, albumIDs: albumIDs, warmIDs: warmIDs, coldIDs: coldIDs,
            inProcessColdIDs: inProcessColdIDs)

        // 3. In-process first, while the machine is otherwise idle: the engine calls, then with the document and JSON.
        var engineMs: [String: Double] = [:]
        var handlerMs: [String: Double] = [:]
        for scenario in scenarios {
            log("in-process: \(scenario.name)")
            let cold = scenario.key == "artworkCold"
            if let engine = scenario.engine {
                engineMs[scenario.key] = try await Measure.median(runs: cold ? inProcessColdIDs.count : 200, warmup: cold ? 0 : 5, engine)
            }
            if let handler = scenario.handler {
                handlerMs[scenario.key] = try await Measure.median(runs: 200, warmup: 5, handler)
            }
        }

        // What the JSON costs alone: the first page's document (50 whole tracks) encoded as the server does
        // (sorted keys, ISO 8601 dates), and by a plain JSONEncoder.
        let document = try await Documents.tracks(try await library.list(query, limit: 50), library)
        let wireMs = try await Measure.median(runs: 200, warmup: 5) { _ = try Wire.encode(document) }
        let plainMs = try await Measure.median(runs: 200, warmup: 5) { _ = try JSONEncoder().encode(document) }
        let documentBytes = try Wire.encode(document).count
        // What every request pays before its handler: the API key looked up (SHA-256, one read).
        let authMs = try await Measure.median(runs: 200, warmup: 5) { _ = try await library.user(forAPIKey: key) }

        // 4. The server, and wrk against it.
        let server = try ServerProcess(shelf: shelf, library: directory)
        log("server pid \(server.pid) on port \(server.port)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-serve-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var loaded: [String: Load] = [:]
        var single: [String: Load] = [:]
        var coldRequested = 0
        do {
            for scenario in scenarios {
                if scenario.key == "artworkWarm" {
                    log("warming the \(warmIDs.count) pictures")
                    _ = try load(scenario, port: server.port, key: key, connections: 1, threads: 1, seconds: 1, folder: folder)
                }
                log("wrk: \(scenario.name), \(connections) connections, \(duration) s")
                let result = try load(scenario, port: server.port, key: key, connections: connections, threads: threads, seconds: duration, folder: folder)
                loaded[scenario.key] = result
                if scenario.key == "artworkCold" {
                    coldRequested = min(result.requests + connections, scenario.paths.count)
                    continue  // one connection would find the rest cold too, but only after the loaded run's pictures
                }
                log("wrk: \(scenario.name), 1 connection, \(min(duration, 3)) s")
                single[scenario.key] = try load(scenario, port: server.port, key: key, connections: 1, threads: 1, seconds: min(duration, 3), folder: folder)
            }
        } catch {
            let diagnosis = server.diagnosis
            _ = server.stop()
            throw BenchUsageError(message: "\(error)\n\(diagnosis)")
        }
        let peak = server.peakRSSBytes()
        let logLines = server.logLines
        let status = server.stop()

        // 5. The report.
        var rows: [[any ReportValue]] = []
        for scenario in scenarios {
            let load = loaded[scenario.key] ?? Load()
            let engine = engineMs[scenario.key]
            let one = single[scenario.key]
            rows.append([
                scenario.name, scenario.paths.count, load.requestsPerSecond, load.p50Ms, load.p99Ms, load.statusErrors, load.socketErrors,
                engine, handlerMs[scenario.key], engine.map { load.p50Ms - $0 }, engine.map { load.p50Ms / max($0, 1e-9) },
                one?.p50Ms, one.flatMap { one in engine.map { one.p50Ms - $0 } },
                one.flatMap { one in (handlerMs[scenario.key] ?? (scenario.key == "artworkWarm" ? 0 : nil)).map { one.p50Ms - $0 } },
                one?.requestsPerSecond,
            ])
        }
        results.table(
            "`shelf serve` at \(count) tracks, wrk -t\(threads) -c\(connections) -d\(duration)s over 127.0.0.1 (in-process: median of the same read in this process; overhead = server p50 − in-process)",
            key: "scenarios",
            [
                .init("scenario", "scenario"), .init("paths cycled", "paths"), .init("requests/s", "requestsPerSecond"),
                .init("p50 ms", "p50Ms", decimals: 2), .init("p99 ms", "p99Ms", decimals: 2), .init("non-2xx", "non2xx"),
                .init("socket errors", "socketErrors"), .init("in-process ms", "inProcessMs", decimals: 3),
                .init("in-process + JSON ms", "inProcessWithJSONMs", decimals: 3), .init("overhead ms", "overheadMs", decimals: 2),
                .init("p50 / in-process", "p50ToInProcessRatio", decimals: 1), .init("1 conn p50 ms", "oneConnectionP50Ms", decimals: 3),
                .init("1 conn overhead ms", "oneConnectionOverheadMs", decimals: 3),
                .init("1 conn p50 − (in-process + JSON) ms", "oneConnectionHTTPOverheadMs", decimals: 3),
                .init("1 conn requests/s", "oneConnectionRequestsPerSecond"),
            ], rows)

        let peakMiB = Double(peak) / 1_048_576
        let first = loaded["firstPage"] ?? Load()
        let deepLoad = loaded["cursorPage"] ?? Load()
        let warm = loaded["artworkWarm"] ?? Load()
        // The overhead target is per request, so it is judged unloaded (one connection): at 64
        // connections on two cores a p50 is mostly queueing behind the other 63.
        let overheads = scenarios.compactMap { scenario in
            single[scenario.key].flatMap { one in engineMs[scenario.key].map { one.p50Ms - $0 } }
        }
        let listOverheads = ["firstPage", "cursorPage", "sections", "anchor", "search", "albumTracks"].compactMap { key in
            single[key].flatMap { one in engineMs[key].map { one.p50Ms - $0 } }
        }
        let worstOverhead = listOverheads.max() ?? overheads.max() ?? .nan
        // Beyond the handler's own work (engine, document, JSON): HTTP, routing, the API key, the access log.
        let worstHTTP =
            ["firstPage", "cursorPage", "sections", "anchor", "search", "albumTracks"].compactMap { key in
                single[key].flatMap { one in handlerMs[key].map { one.p50Ms - $0 } }
            }.max() ?? .nan
        results.table(
            "targets", key: "targets",
            [
                .init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 1), .init("met", "met"),
            ],
            [
                ["first page p99 ms at \(connections) connections", first.p99Ms, 10.0, first.p99Ms < 10],
                ["cursor page at 90 % p99 ms at \(connections) connections", deepLoad.p99Ms, 10.0, deepLoad.p99Ms < 10],
                ["warm artwork responses/s (at least)", warm.requestsPerSecond, 2_000.0, warm.requestsPerSecond >= 2_000],
                ["server overhead per request ms (worst JSON read, 1 connection)", worstOverhead, 0.3, worstOverhead < 0.3],
                ["(beyond the handler and its JSON, worst JSON read, 1 connection) ms", worstHTTP, 0.3, worstHTTP < 0.3],
                ["server peak RSS MiB", peakMiB, 300.0, peakMiB < 300],
            ])
        results.sentence(
            "JSON alone: the first page's document (\(figure: "firstPageDocumentBytes", documentBytes) bytes, 50 whole tracks) encodes in \(figure: "firstPageWireEncodeMs", wireMs, decimals: 3) ms with the server's encoder (sorted keys, ISO 8601 dates), \(figure: "firstPagePlainEncodeMs", plainMs, decimals: 3) ms with a plain JSONEncoder. The API key check every request makes first: \(figure: "apiKeyCheckMs", authMs, decimals: 3) ms in-process."
        )
        let cold = scenarios.first { $0.key == "artworkCold" }?.paths.count ?? 0
        results.sentence(
            "Server peak RSS (VmHWM): \(figure: "peakRSSMiB", peakMiB, decimals: 1) MiB; exit status after SIGTERM: \(figure: "serverExitStatus", Int(status)) (\(status == 0 ? "clean" : "NOT clean")); access-log lines read from its stderr: \(figure: "accessLogLines", logLines)."
        )
        results.sentence(
            "Cold artwork: \(figure: "coldArtworkRequested", coldRequested) distinct pictures of \(figure: "coldArtworkAvailable", cold) never requested before (\(coldRequested >= cold ? "the list wrapped: later requests were warm" : "none twice")); \(figure: "albums", albums.count) albums, \(figure: "pictures", artworkIDs.count) pictures, search '\(word)' hits \(figure: "searchHits", hits) tracks; tracks \(figure: "tracks", count)."
        )
    }

    /// The eight scenarios with their paths and in-process equivalents.
    private func makeScenarios(
        _ library: Library, query: LibraryQuery, cursor: PageCursor, section: String, word: String, albumIDs: [GroupID], warmIDs: [ArtworkID],
        coldIDs: [ArtworkID], inProcessColdIDs: [ArtworkID]
    ) -> [Scenario] {
        let encodedCursor = Self.escape(cursor.description)
        let nextCold = Locked(0)
        let nextAlbum = Locked(0)
        let nextWarm = Locked(0)
        @Sendable func cycle(_ counter: Locked<Int>, _ count: Int) -> Int {
            counter.withLock { value in
                defer { value += 1 }
                return value % count
            }
        }
        let size = 320  // the server's size step that 300 rounds up to (ArtworkResponder.step(for: 300))
        return [
            Scenario(
                name: "first page", key: "firstPage", paths: ["/api/tracks?sort=artist&limit=50"],
                engine: {
                    let page = try await library.list(query, limit: 50)
                    _ = try await library.tracks(ids: page.items.map(\.id))
                },
                handler: { _ = try Wire.encode(try await Documents.tracks(try await library.list(query, limit: 50), library)) }),
            Scenario(
                name: "cursor page at 90 %", key: "cursorPage", paths: ["/api/tracks?sort=artist&limit=50&after=\(encodedCursor)"],
                engine: {
                    let page = try await library.list(query, after: cursor, limit: 50)
                    _ = try await library.tracks(ids: page.items.map(\.id))
                },
                handler: { _ = try Wire.encode(try await Documents.tracks(try await library.list(query, after: cursor, limit: 50), library)) }),
            Scenario(
                name: "sections", key: "sections", paths: ["/api/sections?sort=artist"],
                engine: { _ = try await library.sections(query) },
                handler: { _ = try Wire.encode(SectionsDocument(sections: try await library.sections(query))) }),
            Scenario(
                name: "anchor \(section)", key: "anchor", paths: ["/api/anchor?section=\(Self.escape(section))&sort=artist"],
                engine: { _ = try await library.anchor(section, query) },
                handler: {
                    let anchor = try await library.anchor(section, query)
                    _ = try Wire.encode(["section": section, "index": "\(anchor?.index ?? 0)", "cursor": anchor?.cursor.description ?? ""])
                }),
            Scenario(
                name: "search '\(word)'", key: "search", paths: ["/api/search?q=\(word)&limit=50"],
                engine: {
                    let page = try await library.search(word, limit: 50)
                    _ = try await library.tracks(ids: page.items.map(\.id))
                },
                handler: { _ = try Wire.encode(try await Documents.tracks(try await library.search(word, limit: 50), library)) }),
            Scenario(
                name: "album tracks", key: "albumTracks", paths: albumIDs.map { "/api/albums/\($0.rawValue)/tracks" },
                engine: {
                    let items = try await library.albumTracks(albumIDs[cycle(nextAlbum, albumIDs.count)])
                    _ = try await library.tracks(ids: items.map(\.id))
                },
                handler: {
                    let items = try await library.albumTracks(albumIDs[cycle(nextAlbum, albumIDs.count)])
                    _ = try Wire.encode(try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: items.count), library))
                }),
            Scenario(
                name: "artwork \(size) px warm", key: "artworkWarm", paths: warmIDs.map { "/api/artwork/\($0)?size=300" },
                engine: {
                    let image = try await library.artwork.image(of: warmIDs[cycle(nextWarm, warmIDs.count)], maxPixelSize: size)
                    _ = try ImageCodec.encode(image, as: .jpeg(quality: 85))
                },
                handler: nil),
            Scenario(
                name: "artwork \(size) px cold", key: "artworkCold", paths: coldIDs.map { "/api/artwork/\($0)?size=300" },
                engine: {
                    let image = try await library.artwork.image(of: inProcessColdIDs[cycle(nextCold, inProcessColdIDs.count)], maxPixelSize: size)
                    _ = try ImageCodec.encode(image, as: .jpeg(quality: 85))
                },
                handler: nil),
        ]
    }

    /// A query value percent-encoded (cursors hold `+`, `/` and `=`).
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))
            ?? text
    }

    /// The `shelf` binary beside this one.
    static func shelfBinary() throws -> URL {
        let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf")
        guard FileManager.default.isExecutableFile(atPath: shelf.path) else {
            throw BenchUsageError(message: "no shelf binary beside shelf-bench (\(shelf.path)); build the package first")
        }
        return shelf
    }

    /// The library in `directory` (generated once with a picture per album, reused by later runs)
    /// with its mirror complete, and an API key of an admin: what `serve` and `subsonic` measure.
    static func openLibrary(_ directory: URL, tracks: Int, log: (String) -> Void) async throws -> (Library, String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let library = Library(directory: directory, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            // Noise pictures, because they are distinct: the generator's flat gradients come in only
            // 256 tints, so content addressing folds a whole library's albums into 256 pictures and
            // the cold scenario would wrap. 300 px (about 75 KB each, 3 GB at 500,500 tracks) rather
            // than 600 (12 GB); a 320 px request then decodes the whole picture, about what a 600 px
            // cover DCT-scaled by 1/2 costs.
            log("generating \(tracks) tracks with a 300×300 noise picture per album")
            let started = Date()
            _ = try await DatasetGenerator(tracks: tracks, artwork: .init(side: 300, perTrack: false, noise: true)).fill(library)
            log("generated in \(Int(Date().timeIntervalSince(started))) s")
        }
        log("completing the read mirror")
        _ = try await library.completeMirror()
        return (library, try await apiKey(library, directory))
    }

    /// The API key in `DIR/bench-api-key`, made (with a `bench` admin when there are no users) when missing or no longer valid.
    static func apiKey(_ library: Library, _ directory: URL) async throws -> String {
        let file = directory.appendingPathComponent("bench-api-key")
        if let saved = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !saved.isEmpty,
            try await library.user(forAPIKey: saved) != nil
        {
            return saved
        }
        let user: User
        if let admin = try await library.users().first(where: \.isAdmin) {
            user = admin
        } else {
            user = try await library.addUser(name: "bench", password: UUID().uuidString, admin: true)
        }
        let key = try await library.createAPIKey(for: user.id).key
        try Data((key + "\n").utf8).write(to: file, options: .atomic)
        return key
    }

    /// Runs wrk once with a script setting the key, cycling the paths and printing its figures as JSON.
    private func load(_ scenario: Scenario, port: Int, key: String, connections: Int, threads: Int, seconds: Int, folder: URL) throws -> Load {
        try Self.load(
            wrk: wrk, name: scenario.key, paths: scenario.paths, port: port, bearer: key, connections: connections, threads: threads, seconds: seconds,
            folder: folder)
    }

    /// Runs `wrk` once cycling `paths` (each thread striding over them), with `bearer` as the
    /// Authorization header when given, and reads the figures its `done` function prints.
    static func load(
        wrk: String, name: String, paths list: [String], port: Int, bearer: String?, connections: Int, threads: Int, seconds: Int, folder: URL
    ) throws -> Load {
        let script = folder.appendingPathComponent("\(name).lua")
        let paths = list.map { "\"\($0)\"" }.joined(separator: ",\n")
        try Data(
            """
            \(bearer.map { "wrk.headers[\"Authorization\"] = \"Bearer \($0)\"" } ?? "")
            local paths = {
            \(paths)
            }
            local made = 0
            function setup(thread)
              thread:set("first", made)
              made = made + 1
            end
            function init(args)
              index = first
            end
            function request()
              local path = paths[(index % #paths) + 1]
              index = index + \(threads)
              return wrk.format("GET", path)
            end
            function done(summary, latency, requests)
              local e = summary.errors
              io.write(string.format('SHELF-BENCH {"requests":%.0f,"durationUs":%.0f,"status":%.0f,"socket":%.0f,"p50Us":%.1f,"p99Us":%.1f}\\n',
                summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
                latency:percentile(50.0), latency:percentile(99.0)))
            end

            """.utf8
        ).write(to: script)
        let result = try ChildProcess.run(
            URL(fileURLWithPath: wrk),
            ["-t", "\(threads)", "-c", "\(connections)", "-d", "\(seconds)s", "--latency", "-s", script.path, "http://127.0.0.1:\(port)/"])
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last(where: { $0.hasPrefix("SHELF-BENCH ") }),
            let object = try JSONSerialization.jsonObject(with: Data(line.dropFirst("SHELF-BENCH ".count).utf8)) as? [String: Any]
        else { throw BenchUsageError(message: "wrk failed (\(result.status)): \(result.stdout) \(result.stderr)") }
        func number(_ key: String) -> Double { (object[key] as? NSNumber)?.doubleValue ?? 0 }
        return Load(
            requests: Int(number("requests")), seconds: number("durationUs") / 1e6, statusErrors: Int(number("status")),
            socketErrors: Int(number("socket")), p50Ms: number("p50Us") / 1000, p99Ms: number("p99Us") / 1000)
    }
}

/// `shelf --library DIR serve --listen 127.0.0.1:0` as a child: its port read from the line it
/// logs when ready, and the rest of its stderr (one access-log line per request) read and counted
/// on a thread of its own so that the pipe never fills.
final class ServerProcess {
    private let process: Process
    /// The child's process ID.
    let pid: Int32
    /// The port it listens on.
    let port: Int
    private let lines = Locked(0)
    private let tail = Locked<[String]>([])
    private let done = DispatchSemaphore(value: 0)

    /// Starts the server and returns once it serves (or throws with what it printed).
    init(shelf: URL, library: URL, arguments: [String] = []) throws {
        let process = Process()
        process.executableURL = shelf
        process.arguments = ["--library", library.path, "serve", "--listen", "127.0.0.1:0"] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        process.standardError = err
        try process.run()
        self.process = process
        pid = process.processIdentifier
        let ready = DispatchSemaphore(value: 0)
        let found = Locked<(port: Int?, text: String)>((nil, ""))
        let lines = self.lines
        let tail = self.tail
        let done = self.done
        let reader = err.fileHandleForReading
        Thread.detachNewThread {
            var pending = Data()
            var signalled = false
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending += chunk
                var count = 0
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    if !signalled {
                        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                        found.withLock { $0.text += line + "\n" }
                        if line.hasPrefix("shelf: serving "), let range = line.range(of: "http://127.0.0.1:", options: .backwards),
                            let port = Int(line[range.upperBound...])
                        {
                            found.withLock { $0.port = port }
                            signalled = true
                            ready.signal()
                        }
                    } else {
                        count += 1
                        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                        tail.withLock { tail in
                            tail.append(line)
                            if tail.count > 40 { tail.removeFirst(tail.count - 40) }
                        }
                    }
                    pending.removeSubrange(pending.startIndex...newline)
                }
                if count > 0 { lines.withLock { $0 += count } }
            }
            if !signalled { ready.signal() }
            done.signal()
        }
        _ = ready.wait(timeout: .now() + 600)
        let (port, text) = found.withLock { ($0.port, $0.text) }
        guard let port else {
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
            throw BenchUsageError(message: "shelf serve did not start: \(text)")
        }
        self.port = port
    }

    /// Lines read from its stderr after the ready line (access-log lines, and "stopping"/"stopped" at the end).
    var logLines: Int { lines.withLock { $0 } }

    /// Whether it still runs, else how it ended, with the last lines it printed (after the access log).
    var diagnosis: String {
        let last = tail.withLock { $0 }.filter { !$0.hasPrefix("GET ") }.suffix(30).joined(separator: "\n")
        if process.isRunning { return "the server still runs; its last lines: \(last)" }
        return "the server ended (\(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)); its last lines:\n\(last)"
    }

    /// `VmHWM` of the child, in bytes.
    func peakRSSBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first { Int($0) != nil } ?? "0") ?? 0) * 1024
    }

    /// SIGTERM, then its exit status (after at most 30 s; SIGKILL beyond that, status -1).
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(pid, SIGTERM)
        if done.wait(timeout: .now() + 30) == .timedOut {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : -1
    }
}
