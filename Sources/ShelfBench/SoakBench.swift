import Foundation
import Shelf
import ShelfCore
import ShelfDatabase
import ShelfTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `shelf-bench soak --minutes 60 --dir DIR [--tracks 100000]`: `shelf serve` under a fixed mix of
/// requests for an hour, watched for creep. The library is `--tracks` real sample files (written
/// and imported once, reused), served with the watcher on and scheduled backups every 10 minutes.
/// The mix: deep pages and search, album lists, a whole Subsonic sync every few minutes, streams
/// with ranges and transcodes (each read to its end and checked complete), artwork at random
/// sizes, event streams that connect and drop, ratings, stars and tag edits through the API,
/// files copied in and deleted under the watcher, and sign-ins with wrong passwords. Every
/// `--sample` seconds the server's RSS, open descriptors and `/api/memory` are recorded. The report
/// compares the last window (10 minutes) with the first after the warm-up, peak with peak and p99
/// with p99, writes the table and `soak.svg`, and
/// checks the store (`integrity_check`) and the mirror against it at the end.
struct SoakBench {
    let minutes: Double
    let warmup: Double
    let tracks: Int
    let directory: URL
    let sampleSeconds: Double
    let workers: Int

    /// Reads `--minutes 60 --dir DIR [--tracks 100000] [--warmup 5] [--sample 10] [--workers 4]`.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--minutes", "--dir", "--tracks", "--warmup", "--sample", "--workers"])
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        minutes = Double(try flags.int("--minutes", default: 60))
        warmup = Double(try flags.int("--warmup", default: min(5, Int(minutes / 3))))
        tracks = max(100, try flags.int("--tracks", default: 100_000))
        sampleSeconds = Double(max(1, try flags.int("--sample", default: 10)))
        workers = max(1, try flags.int("--workers", default: 4))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("soak: \(text)\n".utf8)) }

    /// One request's outcome.
    struct Outcome: Sendable {
        let kind: String
        let at: Double
        let milliseconds: Double
        let status: Int
        /// A stream read short of its Content-Length.
        let incomplete: Bool
    }

    /// One sample of the server's resources.
    struct Sample: Sendable {
        let at: Double
        let rssMiB: Double
        /// The heap and other private memory (`RssAnon`): what a leak or a growing cache adds to.
        let anonymousMiB: Double
        let descriptors: Int
        /// The machine's one-minute load average: a slower last window on a busier machine is the machine.
        let load: Double
        /// What the server says its memory is (`/api/memory`), nil when it did not answer.
        let memory: Memory?
    }

    /// The parts of the server's memory `/api/memory` names, in bytes (IDs for `subsonicListIDs`).
    struct Memory: Sendable, Decodable {
        let heapInUse: Double
        let heapFree: Double
        let databaseCache: Double
        let artworkCache: Double
        let subsonicListIDs: Double
    }

    func run(_ results: inout Report) async throws {
        let music = directory.appendingPathComponent("music-\(tracks)")
        let libraryDirectory = directory.appendingPathComponent("library-\(tracks)")
        let written = directory.appendingPathComponent("written-\(tracks)")
        if !FileManager.default.fileExists(atPath: written.path) {
            try? FileManager.default.removeItem(at: music)
            try? FileManager.default.removeItem(at: libraryDirectory)
            log("writing \(tracks) sample files (1 s, MP3, Ogg Opus and FLAC, covers) under \(music.path)")
            _ = try SampleFiles.write(tracks: tracks, to: music, seconds: 1, formats: ["mp3", "opus", "flac"], pictures: true)
            _ = FileManager.default.createFile(atPath: written.path, contents: nil)
        }
        let churn = music.appendingPathComponent("Soak churn")
        try? FileManager.default.removeItem(at: churn)
        try FileManager.default.createDirectory(at: churn, withIntermediateDirectories: true)
        let library = Library(directory: libraryDirectory, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount < tracks / 2 {
            log("importing \(music.path)")
            _ = try await library.importFiles(at: [music])
        }
        _ = try await library.completeMirror()
        let key = try await ServeBench.apiKey(library, libraryDirectory)
        let trackCount = try await library.info().trackCount
        let ids = try await library.snapshot(LibraryQuery(sort: .album))
        let sources = ids.prefix(2_000).map { $0 }
        var paths: [String] = []
        for start in stride(from: 0, to: min(ids.count, 400), by: 100) {
            paths += try await library.tracks(ids: Array(ids[start..<min(ids.count, start + 100)])).tracks.map(\.path)
        }
        let files = paths
        let backups = directory.appendingPathComponent("soak-backups")
        try FileManager.default.createDirectory(at: backups, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("soak.toml")
        try Data("music = [\"\(music.path)\"]\nwatch = true\nbackup-dir = \"\(backups.path)\"\nbackup-every = 600\nbackup-keep = 2\n".utf8)
            .write(to: config)

        log("serving \(trackCount) tracks for \(Int(minutes)) minutes (warm-up \(Int(warmup)))")
        let server = try ServerProcess(shelf: try ServeBench.shelfBinary(), library: libraryDirectory, arguments: ["--config", config.path])
        let base = "http://127.0.0.1:\(server.port)"
        let outcomes = Locked<[Outcome]>([])
        let samples = Locked<[Sample]>([])
        let started = Date()
        let end = started.addingTimeInterval(minutes * 60)
        let session = URLSession(configuration: .ephemeral)

        /// One request, timed; `complete` checks a body against its Content-Length.
        @Sendable func request(
            _ kind: String, _ path: String, method: String = "GET", bearer: Bool = true, headers: [String: String] = [:], body: Data? = nil
        ) async {
            guard var url = URLComponents(string: base + path)?.url else { return }
            if path.hasPrefix("http") { url = URL(string: path)! }
            var request = URLRequest(url: url, timeoutInterval: 120)
            request.httpMethod = method
            if bearer { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.httpBody = body
            if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            let begin = Date()
            var status = 0
            var incomplete = false
            do {
                let (data, response) = try await session.data(for: request)
                let http = response as? HTTPURLResponse
                status = http?.statusCode ?? 0
                if let length = (http?.value(forHTTPHeaderField: "Content-Length")).flatMap(Int.init), length != data.count { incomplete = true }
            } catch {
                status = -1
            }
            let outcome = Outcome(
                kind: kind, at: begin.timeIntervalSince(started), milliseconds: Date().timeIntervalSince(begin) * 1000, status: status,
                incomplete: incomplete)
            outcomes.withLock { $0.append(outcome) }
        }

        /// A sign-in with a wrong password sent by curl from 127.0.0.2.
        @Sendable func wrongPassword(_ name: String) async {
            let begin = Date()
            let result = try? ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.2", "-H", "Content-Type: application/json",
                    "--data", "{\"name\":\"\(name)\",\"password\":\"guess\"}", "\(base)/api/session",
                ])
            let status = Int(result?.stdout ?? "") ?? -1
            let outcome = Outcome(
                kind: "wrong-password", at: begin.timeIntervalSince(started), milliseconds: Date().timeIntervalSince(begin) * 1000, status: status,
                incomplete: false)
            outcomes.withLock { $0.append(outcome) }
        }

        @Sendable func subsonic(_ endpoint: String, _ query: String) -> String { "/rest/\(endpoint)?apiKey=\(key)&v=1.16.1&c=soak&f=json&\(query)" }

        // The mix: each worker draws the next request by weight.
        @Sendable func worker(_ seed: UInt64) async {
            var random = SeededRandom(seed: seed)
            while Date() < end {
                let id = sources[random.int(0...(sources.count - 1))].rawValue
                switch random.int(0...99) {
                case 0..<20: await request("page", "/api/tracks?limit=100&offset=\(random.int(0...max(0, trackCount - 100)))&sort=album")
                case 20..<30:
                    await request(
                        "search",
                        subsonic(
                            "search3",
                            "query=\(["love", "night", "a", "の"].randomElement()!.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&songCount=50"))
                case 30..<40:
                    await request(
                        "albums",
                        subsonic(
                            "getAlbumList2", "type=\(["alphabeticalByName", "random", "newest"].randomElement()!)&size=100&offset=\(random.int(0...2_000))"))
                case 40..<52:
                    // Inside any file (the sample files can be 1.4 KB), wherever it starts.
                    let from = random.int(0...1_000)
                    await request("stream-range", "/api/stream/\(id)", headers: ["Range": "bytes=\(from)-\(from + 65_535)"])
                case 52..<58: await request("stream-transcode", "/api/stream/\(id)?format=opus&bitRate=96")
                case 58..<62: await request("stream-whole", subsonic("stream", "id=tr-\(id)"))
                case 62..<80: await request("artwork", "/api/tracks/\(id)/artwork?size=\([48, 96, 160, 300, 600, 777].randomElement()!)")
                case 80..<88: await request("rating", "/api/tracks/\(id)/rating", method: "PUT", body: Data("{\"rating\":\(random.int(0...5) * 20)}".utf8))
                case 88..<92: await request("star", "/api/tracks/\(id)/star", method: random.int(0...1) == 0 ? "PUT" : "DELETE")
                case 92..<97:
                    // From another loopback address: ten failures lock their address out, and the
                    // rest of the mix must not share it.
                    await wrongPassword("nobody-\(random.int(0...9))")
                default: await request("album-list-json", "/api/albums?limit=200")
                }
            }
        }

        // Every few minutes a whole Subsonic sync (search3 "" in pages of 500); event streams that
        // connect and drop; files copied in and deleted under the watcher; a tag edit.
        @Sendable func periodic() async {
            var round = 0
            while Date() < end {
                round += 1
                if round % 30 == 1 {
                    var offset = 0
                    while offset < trackCount && Date() < end {
                        await request("sync-page", subsonic("search3", "query=&songCount=500&songOffset=\(offset)&artistCount=0&albumCount=0"))
                        offset += 500
                    }
                }
                let events = Task { await request("events", "/api/events") }
                try? await Task.sleep(for: .seconds(2))
                events.cancel()
                let copied = churn.appendingPathComponent("churn-\(round % 3).\(URL(fileURLWithPath: files[round % files.count]).pathExtension)")
                try? FileManager.default.removeItem(at: copied)
                try? FileManager.default.copyItem(atPath: files[round % files.count], toPath: copied.path)
                if round % 5 == 0 {
                    let id = sources[round % sources.count].rawValue
                    await request("edit", "/api/edit", method: "POST", body: Data("{\"ids\":[\(id)],\"set\":{\"comment\":\"soak \(round)\"}}".utf8))
                }
                try? await Task.sleep(for: .seconds(8))
            }
        }

        let pid = server.pid
        let interval = sampleSeconds
        let sampler = Task {
            while Date() < end {
                let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
                func kibibytes(_ field: String) -> Double {
                    status.split(separator: "\n").first { $0.hasPrefix(field) }.flatMap { line in
                        line.split(separator: " ").compactMap { Double($0) }.first
                    } ?? 0
                }
                let load = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").first.flatMap { Double($0) }
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
                var memory: Memory?
                if let url = URL(string: base + "/api/memory") {
                    var request = URLRequest(url: url, timeoutInterval: 30)
                    request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
                    if let (data, _) = try? await session.data(for: request) { memory = try? JSONDecoder().decode(Memory.self, from: data) }
                }
                let sample = Sample(
                    at: Date().timeIntervalSince(started), rssMiB: kibibytes("VmRSS:") / 1024, anonymousMiB: kibibytes("RssAnon:") / 1024,
                    descriptors: descriptors, load: load ?? 0, memory: memory)
                samples.withLock { $0.append(sample) }
                try? await Task.sleep(for: .seconds(interval))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<workers { group.addTask { await worker(UInt64(index) + 1) } }
            group.addTask { await periodic() }
        }
        _ = await sampler.value
        let exit = server.stop()
        try? FileManager.default.removeItem(at: churn)

        // The store and the mirror as the run left them.
        log("checking the store and the mirror")
        let checked = Library(directory: libraryDirectory, configuration: .init(buildsMirrorInBackground: false))
        let integrity =
            try Connection(path: libraryDirectory.appendingPathComponent("library.sqlite").path, mode: .readOnly).scalar(String.self, "PRAGMA integrity_check")
            ?? ""
        _ = try await checked.completeMirror()
        let mirrored = try await checked.snapshot(LibraryQuery(sort: .title))
        try await checked.disableMirror()
        let stored = try await checked.snapshot(LibraryQuery(sort: .title))
        try await checked.enableMirror()
        _ = try await checked.completeMirror()

        report(
            &results, outcomes: outcomes.withLock { $0 }, samples: samples.withLock { $0 }, integrity: integrity, mirrorMatches: mirrored == stored,
            serverExit: exit)
    }

    private func report(_ results: inout Report, outcomes: [Outcome], samples: [Sample], integrity: String, mirrorMatches: Bool, serverExit: Int32) {
        let warm = warmup * 60
        let window = min(10 * 60, max(60, (minutes * 60 - warm) / 3))
        let last = minutes * 60 - window
        func p99(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        }
        var rows: [[any ReportValue]] = []
        var steady = true
        var unanswered = 0
        for kind in Set(outcomes.map(\.kind)).sorted() {
            let all = outcomes.filter { $0.kind == kind }
            let first = p99(all.filter { $0.at >= warm && $0.at < warm + window }.map(\.milliseconds))
            let end = p99(all.filter { $0.at >= last }.map(\.milliseconds))
            let ratio = first.flatMap { a in end.map { $0 / max(a, 0.001) } }
            let serverErrors = all.filter { $0.status >= 500 }.count
            let failed = all.filter { $0.status <= 0 }.count
            let incomplete = all.filter(\.incomplete).count
            // Event streams are cut by design; wrong passwords are 401/429 by design.
            if kind != "events", let ratio, ratio > 1.5 { steady = false }
            let answered = all.filter { (200..<400).contains($0.status) }.count
            // Every kind but the refused sign-ins (401, then 429) and the cut event streams is answered.
            // Transcodes beyond the server's limit are refused with 429 by design; pictures are 404
            // in a library without them.
            let refusedByDesign = all.filter { ($0.status == 429 && kind == "stream-transcode") || ($0.status == 404 && kind == "artwork") }.count
            if !["wrong-password", "events"].contains(kind), answered + refusedByDesign < all.count {
                unanswered += all.count - answered - refusedByDesign
            }
            rows.append([kind, all.count, answered, first, end, ratio, serverErrors, failed, incomplete])
        }
        results.table(
            "Requests by kind: p99 in the first \(Int(window / 60)) minutes after the warm-up and the last \(Int(window / 60))", key: "kinds",
            [
                .init("kind", "kind"), .init("requests", "requests"), .init("2xx/3xx", "answered"), .init("p99 first ms", "p99FirstMs", decimals: 1),
                .init("p99 last ms", "p99LastMs", decimals: 1), .init("last ÷ first", "ratio", decimals: 2), .init("5xx", "serverErrors"),
                .init("no answer", "failed"), .init("incomplete", "incomplete"),
            ], rows)
        let afterWarmup = samples.filter { $0.at >= warm }
        func meanLoad(_ range: Range<Double>) -> Double {
            let loads = samples.filter { range.contains($0.at) }.map(\.load)
            return loads.isEmpty ? .nan : loads.reduce(0, +) / Double(loads.count)
        }
        let startAnonymous = afterWarmup.first?.anonymousMiB ?? .nan
        let endAnonymous = afterWarmup.suffix(3).map(\.anonymousMiB).max() ?? .nan
        /// A part of the server's memory after the warm-up and at the end (the last three samples' largest), in MiB.
        func part(_ name: String, _ value: KeyPath<Memory, Double>, scale: Double = 1_048_576) -> [any ReportValue] {
            let first = afterWarmup.lazy.compactMap(\.memory).first.map { $0[keyPath: value] / scale } ?? .nan
            let end = afterWarmup.suffix(3).compactMap(\.memory).map { $0[keyPath: value] / scale }.max() ?? .nan
            return [name, first, end]
        }
        results.table(
            "The machine and the server's private memory, first window after the warm-up and last", key: "machine",
            [.init("measure", "measure"), .init("first", "first", decimals: 2), .init("last", "last", decimals: 2)],
            [
                ["load average (1 min), mean over the window, 2 cores", meanLoad(warm..<(warm + window)), meanLoad(last..<(minutes * 60 + 1))],
                ["RssAnon MiB (heap and caches), after the warm-up and at the end", startAnonymous, endAnonymous],
                ["RSS MiB, after the warm-up and at the end", afterWarmup.first?.rssMiB ?? .nan, afterWarmup.suffix(3).map(\.rssMiB).max() ?? .nan],
                [
                    "open descriptors, after the warm-up and at the end", Double(afterWarmup.first?.descriptors ?? 0),
                    Double(afterWarmup.suffix(3).map(\.descriptors).max() ?? 0),
                ],
                part("malloc in use MiB (/api/memory heapInUse)", \.heapInUse),
                part("malloc free inside its arenas MiB (heapFree)", \.heapFree),
                part("SQLite caches MiB (databaseCache, cap 32)", \.databaseCache),
                part("picture cache MiB (artworkCache, cap 16)", \.artworkCache),
                part("album IDs in Subsonic list positions (subsonicListIDs, budget 200,000)", \.subsonicListIDs, scale: 1),
            ])
        // Peaks of the first window after the warm-up and of the last, like with like: one sample
        // against the last three's largest read the descriptors of a few requests in flight as growth.
        let firstWindow = samples.filter { $0.at >= warm && $0.at < warm + window }
        let lastWindow = samples.filter { $0.at >= last }
        let startRSS = firstWindow.map(\.rssMiB).max() ?? .nan
        let endRSS = lastWindow.map(\.rssMiB).max() ?? .nan
        let startFDs = firstWindow.map(\.descriptors).max() ?? 0
        let endFDs = lastWindow.map(\.descriptors).max() ?? 0
        let peakRSS = samples.map(\.rssMiB).max() ?? .nan
        let errors = outcomes.filter { $0.status >= 500 && $0.kind != "events" }.count
        let incomplete = outcomes.filter { $0.incomplete && $0.kind.hasPrefix("stream") }.count
        results.table(
            "targets", key: "targets",
            [.init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 2), .init("met", "met")],
            [
                [
                    "peak RSS, last window ÷ first after the warm-up (MiB \(Int(startRSS)) → \(Int(endRSS)), whole run's peak \(Int(peakRSS)))",
                    endRSS / startRSS, 1.1, endRSS <= startRSS * 1.1,
                ],
                [
                    "peak open descriptors, last window ÷ first (\(startFDs) → \(endFDs))", Double(endFDs) / Double(max(1, startFDs)), 1.1,
                    Double(endFDs) <= Double(startFDs) * 1.1,
                ],
                ["every kind's p99, last window ÷ first (1 = yes)", steady ? 1.0 : 0.0, 1.0, steady],
                ["5xx answers", Double(errors), 0.0, errors == 0],
                ["requests not answered 2xx/3xx (but refused sign-ins and cut event streams)", Double(unanswered), 0.0, unanswered == 0],
                ["streams cut short", Double(incomplete), 0.0, incomplete == 0],
                ["integrity_check ok (1 = yes)", integrity == "ok" ? 1.0 : 0.0, 1.0, integrity == "ok"],
                ["the mirror lists what the store does (1 = yes)", mirrorMatches ? 1.0 : 0.0, 1.0, mirrorMatches],
                ["the server stopped cleanly (exit status)", Double(serverExit), 0.0, serverExit == 0],
            ])
        let svg = directory.appendingPathComponent("soak.svg")
        try? Data(Self.plot(samples: samples, outcomes: outcomes, minutes: minutes, warmup: warm).utf8).write(to: svg)
        results.sentence("The plot of RSS, descriptors and p99 over time is \(figure: "plot", svg.path).")
    }

    /// RSS and its private part, malloc's live heap and SQLite's caches (MiB), open descriptors and the p99 of all
    /// requests per minute, as lines over time.
    static func plot(samples: [Sample], outcomes: [Outcome], minutes: Double, warmup: Double) -> String {
        let width = 900.0
        let height = 260.0
        let span = max(1, minutes * 60)
        func x(_ at: Double) -> Double { 50 + (at / span) * (width - 70) }
        func line(_ points: [(Double, Double)], _ top: Double, _ color: String, dashed: Bool = false) -> String {
            guard top > 0, !points.isEmpty else { return "" }
            let path = points.map { String(format: "%.1f,%.1f", x($0.0), height - 30 - ($0.1 / top) * (height - 50)) }.joined(separator: " ")
            let dash = dashed ? " stroke-dasharray=\"5 3\"" : ""
            return "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\"\(dash) points=\"\(path)\"/>"
        }
        var p99s: [(Double, Double)] = []
        for minute in 0..<Int(minutes.rounded(.up)) {
            let values = outcomes.filter { $0.kind != "events" && $0.at >= Double(minute) * 60 && $0.at < Double(minute + 1) * 60 }.map(\.milliseconds).sorted()
            if !values.isEmpty { p99s.append((Double(minute) * 60 + 30, values[min(values.count - 1, Int(Double(values.count) * 0.99))])) }
        }
        let rss = samples.map { ($0.at, $0.rssMiB) }
        let fds = samples.map { ($0.at, Double($0.descriptors)) }
        let rssTop = (rss.map(\.1).max() ?? 1) * 1.2
        let fdTop = (fds.map(\.1).max() ?? 1) * 1.2
        let p99Top = (p99s.map(\.1).max() ?? 1) * 1.2
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <line x1="50" y1="\(height - 30)" x2="\(width - 20)" y2="\(height - 30)" stroke="#999"/>
            <line x1="\(x(warmup))" y1="10" x2="\(x(warmup))" y2="\(height - 30)" stroke="#ccc" stroke-dasharray="4"/>
            <text x="\(x(warmup) + 4)" y="22" fill="#777">warm-up ends</text>
            \(line(rss, rssTop, "#1f77b4"))
            \(line(samples.map { ($0.at, $0.anonymousMiB) }, rssTop, "#1f77b4", dashed: true))
            \(line(samples.compactMap { s in s.memory.map { (s.at, $0.heapInUse / 1_048_576) } }, rssTop, "#9467bd"))
            \(line(samples.compactMap { s in s.memory.map { (s.at, $0.databaseCache / 1_048_576) } }, rssTop, "#ff7f0e"))
            \(line(fds, fdTop, "#2ca02c"))
            \(line(p99s, p99Top, "#d62728"))
            <text x="50" y="\(height - 10)">0</text><text x="\(width - 60)" y="\(height - 10)">\(Int(minutes)) min</text>
            <text x="60" y="40" fill="#1f77b4">RSS, dashed: its heap (top \(Int(rssTop)) MiB)</text>
            <text x="260" y="40" fill="#2ca02c">open descriptors (top \(Int(fdTop)))</text>
            <text x="500" y="40" fill="#d62728">p99 per minute (top \(Int(p99Top)) ms)</text>
            <text x="60" y="56" fill="#9467bd">malloc in use</text>
            <text x="160" y="56" fill="#ff7f0e">SQLite caches (same scale as RSS)</text>
            </svg>

            """
    }
}
