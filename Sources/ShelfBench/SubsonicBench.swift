import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench subsonic`: the OpenSubsonic API of a real `shelf serve` child, through HTTP with
/// apiKey auth and `f=json`, as the apps use it: a whole-library search3 sync, deep album-list
/// pages, random songs, the artist index, cover art under wrk, and stream time to first byte.
struct SubsonicBench {
    let directory: URL
    let tracks: Int
    let connections: Int
    let duration: Int
    let threads: Int
    let wrk: String

    /// `--peer supysonic`: the side-by-side run instead (see `PeerBench`), on `--files` real files.
    let peer: PeerBench?

    /// Reads the command's flags.
    init(_ words: [String]) throws {
        var rest = words
        var peerName: String?
        var files = 2_000
        for flag in ["--peer", "--files"] {
            guard let at = rest.firstIndex(of: flag) else { continue }
            guard at + 1 < rest.count else { throw BenchUsageError(message: "\(flag) needs a value") }
            if flag == "--peer" {
                peerName = rest[at + 1]
            } else {
                guard let number = Int(rest[at + 1]), number > 0 else { throw BenchUsageError(message: "--files expects a count, got '\(rest[at + 1])'") }
                files = number
            }
            rest.removeSubrange(at...(at + 1))
        }
        (directory, tracks, connections, duration, threads, wrk) = try ServeBench.serverFlags(rest, connections: 16, duration: 5)
        if let peerName {
            guard peerName == "supysonic" else { throw BenchUsageError(message: "--peer knows supysonic, got '\(peerName)'") }
            peer = PeerBench(directory: directory, files: files)
        } else {
            peer = nil
        }
    }

    /// The median of `runs` request times (each call's own, from request written to last byte
    /// read: the client's parsing of the answer is not the server's time).
    static func median(runs: Int, warmup: Int, _ body: () throws -> Double) throws -> Double {
        for _ in 0..<warmup { _ = try body() }
        let samples = try (0..<runs).map { _ in try body() }.sorted()
        return samples[samples.count / 2]
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("subsonic: \(text)\n".utf8)) }

    /// One keep-alive HTTP/1.1 connection, as an app holds one through a sync: each call's time is
    /// the client's, from the request written to the last body byte read.
    final class Client {
        private var connection: RawConnection
        private let port: Int
        private let query: String

        /// A connection to 127.0.0.1:`port` sending `apiKey` and `f=json` with every call.
        convenience init(port: Int, key: String) throws {
            try self.init(port: port, auth: "apiKey=\(ServeBench.escape(key))")
        }

        /// A connection to 127.0.0.1:`port` sending `auth` (the credentials' query) and `f=json` with every call.
        init(port: Int, auth: String) throws {
            self.port = port
            query = "\(auth)&f=json&v=1.16.1&c=shelf-bench"
            connection = try RawConnection(port: UInt16(port))
        }

        /// `/rest/NAME.view?…` answered: the milliseconds it took and the `subsonic-response` object.
        func call(_ name: String, _ parameters: String = "") throws -> (ms: Double, response: [String: Any]) {
            let started = DispatchTime.now().uptimeNanoseconds
            let body = try get("/rest/\(name).view?\(query)\(parameters.isEmpty ? "" : "&" + parameters)")
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            guard let root = try JSONSerialization.jsonObject(with: body) as? [String: Any],
                let response = root["subsonic-response"] as? [String: Any], response["status"] as? String == "ok"
            else { throw BenchUsageError(message: "\(name)?\(parameters) failed: \(String(decoding: body.prefix(500), as: UTF8.self))") }
            return (ms, response)
        }

        /// The body of one GET (the server always sends Content-Length for these documents).
        private func get(_ path: String) throws -> Data {
            try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let (head, rest) = connection.readHead()
            guard head.hasPrefix("HTTP/1.1 200"),
                let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                let length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
            else { throw BenchUsageError(message: "GET \(path): \(head)") }
            var body = rest
            if body.count < length { body += connection.read { body.count + $0.count >= length } }
            return body
        }
    }

    /// Prepares the library, then measures each scenario against a fresh server.
    func run(_ results: inout Report) async throws {
        if let peer { return try await peer.run(&results) }
        guard FileManager.default.isExecutableFile(atPath: wrk) else {
            throw BenchUsageError(message: "\(wrk) not found: install the Debian package wrk (make deps)")
        }
        let shelf = try ServeBench.shelfBinary()
        let (library, key) = try await ServeBench.openLibrary(directory, tracks: tracks, log: log)
        let count = try await library.info().trackCount
        var albums: [GroupItem] = []
        var after: PageCursor?
        repeat {
            let page = try await library.groups(GroupQuery(kind: .album), after: after, limit: 10_000)
            albums += page.items
            after = page.nextCursor
        } while after != nil
        let pictured = albums.filter { $0.artworkID != nil }.map { "al-\($0.id.rawValue)" }
        guard pictured.count >= 2 else { throw BenchUsageError(message: "only \(pictured.count) albums with pictures; use more --tracks") }
        // 50 warm covers, the rest cold (half each in a tiny library).
        let warmCount = min(50, pictured.count / 2)

        let server = try ServerProcess(shelf: shelf, library: directory)
        log("server pid \(server.pid) on port \(server.port)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-subsonic-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var rows: [[any ReportValue]] = []
        /// A scenario row: its name and up to five figures (nil: not measured for it).
        func row(_ name: String, _ ms: Double?, _ second: Double? = nil, _ total: Double? = nil, _ steady: Double? = nil, _ perSecond: Double? = nil)
            -> [any ReportValue]
        {
            [name, ms, second, total, steady, perSecond]
        }
        var targets: [[any ReportValue]] = []
        var syncPeak = 0
        do {
            let client = try Client(port: server.port, key: key)
            _ = try client.call("ping")

            // 1. The whole library as apps sync it: search3 "" 500 songs a page until a short page.
            log("search3 sync of \(count) songs")
            var pages: [Double] = []
            var seen = Set<String>()
            var repeated = 0
            let syncStarted = DispatchTime.now().uptimeNanoseconds
            while true {
                let (ms, response) = try client.call("search3", "query=%22%22&songCount=500&songOffset=\(pages.count * 500)&artistCount=0&albumCount=0")
                pages.append(ms)
                let songs = ((response["searchResult3"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
                for song in songs where !seen.insert(song["id"] as? String ?? "").inserted { repeated += 1 }
                if songs.count < 500 { break }
            }
            let syncSeconds = Double(DispatchTime.now().uptimeNanoseconds - syncStarted) / 1e9
            // The peak so far is the sync's (the server had answered only a ping before it).
            syncPeak = server.peakRSSBytes()
            // The server's share: the pages' request times alone, without this client's JSON parsing.
            let syncServedSeconds = pages.reduce(0, +) / 1000
            let sortedPages = pages.sorted()
            let pageMedian = sortedPages[sortedPages.count / 2]
            let pageMax = sortedPages.last ?? 0
            let exactlyOnce = repeated == 0 && seen.count == count
            rows.append(row("search3 \"\" sync, \(pages.count) pages of 500 (total: with the client's parsing)", pageMedian, pageMax, syncSeconds))
            rows.append(row("search3 \"\" sync, the same pages' request times added up", pageMedian, pageMax, syncServedSeconds))
            results.sentence(
                "search3 sync: \(figure: "syncSongs", seen.count) distinct songs of \(figure: "tracks", count), \(figure: "syncRepeats", repeated) sent twice: \(exactlyOnce ? "every song exactly once" : "NOT every song exactly once")."
            )

            // 2. Album-list pages: a jump to each offset (first visit), then the page after it.
            var albumPages: [(Int, Double, Double, Double)] = []
            // An offset past the last full page (a library with fewer than 41,000 albums) is moved
            // to that page, so the deep page is measured with rows, never as an empty answer.
            let deepest = max(0, (albums.count - 1_000) / 500 * 500)
            for asked in [0, 10_000, 40_000] {
                let offset = min(asked, deepest)
                log("getAlbumList2 at \(offset)")
                let first = try client.call("getAlbumList2", "type=alphabeticalByName&size=500&offset=\(offset)").ms
                let next = try client.call("getAlbumList2", "type=alphabeticalByName&size=500&offset=\(offset + 500)").ms
                // The page after, again: a remembered cursor, so steady-state (median of 20).
                let again = try Self.median(runs: 20, warmup: 0) {
                    try client.call("getAlbumList2", "type=alphabeticalByName&size=500&offset=\(offset + 500)").ms
                }
                albumPages.append((offset, first, next, again))
                rows.append(
                    row(
                        "getAlbumList2 alphabeticalByName size=500 offset \(offset == asked ? "\(offset)" : "\(asked) → \(offset), the last full page"): first visit / page after / page after, median of 20",
                        first, next, nil, again, nil))
            }

            // 3. Random songs and the artist index: medians of 20 and 10 calls.
            log("getRandomSongs, getArtists")
            let random = try Self.median(runs: 20, warmup: 2) { try client.call("getRandomSongs", "size=50").ms }
            rows.append(row("getRandomSongs size=50 (median of 20)", random))
            let randomAlbums = try Self.median(runs: 20, warmup: 2) { try client.call("getAlbumList2", "type=random&size=500").ms }
            rows.append(row("getAlbumList2 type=random size=500 (median of 20)", randomAlbums))
            // The first call renders the index; the rest are answered from it until the library changes.
            let artistsFirst = try client.call("getArtists").ms
            rows.append(row("getArtists, first call (renders the index)", artistsFirst))
            let artists = try Self.median(runs: 10, warmup: 0) { try client.call("getArtists").ms }
            rows.append(row("getArtists (median of 10)", artists))
            // After a write (a rating, which moves the library's change token): what an app's
            // first index and jump bar cost once the library has changed. Median of 5, each after its own write.
            log("getArtists and getAlphabetIndex after a write")
            var rating = 0
            func afterWrite(_ name: String, _ parameters: String) throws -> Double {
                try Self.median(runs: 5, warmup: 0) {
                    rating = rating % 5 + 1
                    _ = try client.call("setRating", "id=tr-1&rating=\(rating)")
                    return try client.call(name, parameters).ms
                }
            }
            let artistsAfterWrite = try afterWrite("getArtists", "")
            rows.append(row("getArtists, first call after a write (median of 5 writes)", artistsAfterWrite))
            var indexes: [(String, Double)] = []
            for (label, parameters) in [
                ("albums alphabeticalByName", "list=albums"), ("albums alphabeticalByArtist", "list=albums&type=alphabeticalByArtist"),
                ("artists", "list=artists"), ("songs by album artist", "list=songs"),
            ] {
                let ms = try afterWrite("getAlphabetIndex", parameters)
                indexes.append((label, ms))
                rows.append(row("getAlphabetIndex \(label), first call after a write (median of 5 writes)", ms))
            }
            let byArtistIndex = indexes.first { $0.0.hasSuffix("ByArtist") }?.1 ?? .nan
            let byArtistDeep = try Self.median(runs: 5, warmup: 0) {
                try client.call("getAlbumList2", "type=alphabeticalByArtist&size=500&offset=\(deepest)").ms
            }
            rows.append(row("getAlbumList2 alphabeticalByArtist size=500 offset \(deepest) (median of 5)", byArtistDeep))

            // 4. Cover art under wrk: 50 albums warmed first, then albums never asked for.
            let auth = "apiKey=\(ServeBench.escape(key))&f=json&v=1.16.1&c=shelf-bench"
            func paths(_ ids: ArraySlice<String>) -> [String] { ids.map { "/rest/getCoverArt.view?id=\($0)&size=300&\(auth)" } }
            let warmPaths = paths(pictured.prefix(warmCount))
            log("getCoverArt warm")
            _ = try ServeBench.load(
                wrk: wrk, name: "warmup", paths: warmPaths, port: server.port, bearer: nil, connections: 1, threads: 1, seconds: 1, folder: folder)
            let warm = try ServeBench.load(
                wrk: wrk, name: "warm", paths: warmPaths, port: server.port, bearer: nil, connections: connections, threads: threads, seconds: duration,
                folder: folder)
            log("getCoverArt cold")
            let coldPaths = paths(pictured.dropFirst(warmCount))
            let cold = try ServeBench.load(
                wrk: wrk, name: "cold", paths: coldPaths, port: server.port, bearer: nil, connections: connections, threads: threads, seconds: duration,
                folder: folder)
            rows.append(row("getCoverArt size=300 warm, wrk -c\(connections) (\(warmCount) albums)", warm.p50Ms, warm.p99Ms, nil, nil, warm.requestsPerSecond))
            rows.append(
                row(
                    "getCoverArt size=300 cold, wrk -c\(connections) (\(min(cold.requests, coldPaths.count)) albums never asked for)", cold.p50Ms, cold.p99Ms,
                    nil, nil, cold.requestsPerSecond))
            if warm.statusErrors + warm.socketErrors + cold.statusErrors + cold.socketErrors > 0 {
                results.sentence(
                    "getCoverArt errors: warm \(figure: "coverWarmErrors", warm.statusErrors + warm.socketErrors), cold \(figure: "coverColdErrors", cold.statusErrors + cold.socketErrors)."
                )
            }

            // Issue 23's targets: every page of an app's browsing within 5 ms on this machine.
            let firstVisitMax = albumPages.map(\.1).max() ?? .nan
            let firstVisit = albumPages.first?.1 ?? .nan
            let deepVisit = albumPages.last?.1 ?? .nan
            let firstNext = albumPages.first?.3 ?? .nan
            let deepNext = albumPages.last?.3 ?? .nan
            targets = [
                ["search3 sync page ms (median)", pageMedian, 5.0, pageMedian <= 5],
                ["search3 sync page ms (max)", pageMax, 15.0, pageMax <= 15],
                ["getAlbumList2 500 albums ms, first visits at 0 / 10,000 / 38,000 (max)", firstVisitMax, 5.0, firstVisitMax <= 5],
                ["deepest album page ÷ first, first visits (×)", deepVisit / firstVisit, 1.5, deepVisit / firstVisit <= 1.5],
                ["deepest album page ÷ first, pages after (×)", deepNext / firstNext, 1.5, deepNext / firstNext <= 1.5],
                ["whole \(count)-song sync s (with the client's parsing)", syncSeconds, 30.0, syncSeconds < 30],
                ["whole \(count)-song sync s (request times)", syncServedSeconds, 5.0, syncServedSeconds <= 5],
                ["every song exactly once (1 = yes)", exactlyOnce ? 1.0 : 0.0, 1.0, exactlyOnce],
                ["getArtists ms (median of the calls after the first)", artists, 50.0, artists < 50],
                ["getArtists ms, first call", artistsFirst, 50.0, artistsFirst <= 50],
                ["getArtists ms, first call after a write", artistsAfterWrite, 50.0, artistsAfterWrite <= 50],
                ["getAlphabetIndex albums alphabeticalByArtist ms, first call after a write", byArtistIndex, 100.0, byArtistIndex <= 100],
                ["getRandomSongs size=50 ms (median)", random, 5.0, random <= 5],
                ["getAlbumList2 type=random size=500 ms (median)", randomAlbums, 5.0, randomAlbums <= 5],
            ]
        } catch {
            let diagnosis = server.diagnosis
            _ = server.stop()
            throw BenchUsageError(message: "\(error)\n\(diagnosis)")
        }
        let peak = server.peakRSSBytes()
        _ = server.stop()
        let peakMiB = Double(peak) / 1_048_576
        let syncPeakMiB = Double(syncPeak) / 1_048_576
        targets.append(["server peak RSS MiB during the whole sync", syncPeakMiB, 100.0, syncPeakMiB <= 100])
        targets.append(["server peak RSS MiB over every scenario (cover art under wrk included)", peakMiB, 150.0, peakMiB <= 150])

        // 5. Stream time to first byte, on a small library of real files beside the big one (its
        // tracks are generated rows without files); the lookup by ID does not grow with the library.
        let ttfb = try await streamFirstByte(shelf: shelf, folder: folder)
        rows.append(row("stream raw, time to first byte (median of 10)", ttfb.raw))
        rows.append(row("stream format=mp3 (transcoded), time to first byte (median of 10)", ttfb.mp3))

        results.table(
            "OpenSubsonic API of `shelf serve` at \(count) tracks (\(albums.count) albums), over 127.0.0.1, apiKey auth, f=json; one keep-alive connection unless wrk",
            key: "scenarios",
            [
                .init("scenario", "scenario"), .init("ms (median, or first)", "ms", decimals: 2), .init("max / second / p99 ms", "secondMs", decimals: 2),
                .init("total s", "totalSeconds", decimals: 2), .init("steady ms", "steadyMs", decimals: 2), .init("requests/s", "requestsPerSecond"),
            ], rows)
        results.table(
            "targets", key: "targets",
            [
                .init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 1), .init("met", "met"),
            ], targets)
        results.sentence(
            "Server peak RSS (VmHWM): \(figure: "syncPeakRSSMiB", syncPeakMiB, decimals: 1) MiB after the sync, \(figure: "peakRSSMiB", peakMiB, decimals: 1) MiB after every scenario."
        )
    }

    /// Medians of curl's time to first byte for `stream` of a real FLAC file, raw and as mp3.
    private func streamFirstByte(shelf: URL, folder: URL) async throws -> (raw: Double, mp3: Double) {
        let small = folder.appendingPathComponent("stream-library")
        let music = folder.appendingPathComponent("stream-music")
        log("stream: writing 5 real 30 s files")
        _ = try SampleFiles.write(tracks: 5, to: music, seconds: 30)
        let library = Library(directory: small, configuration: .init(buildsMirrorInBackground: false))
        _ = try await library.importFiles(at: [music])
        let key = try await ServeBench.apiKey(library, small)
        let ids = try await library.list(LibraryQuery(), limit: 10).items.map(\.id)
        let tracks = try await library.tracks(ids: ids).tracks
        guard let track = tracks.first(where: { $0.path.hasSuffix(".flac") }) ?? tracks.first else { throw BenchUsageError(message: "no track imported") }
        let server = try ServerProcess(shelf: shelf, library: small)
        defer { _ = server.stop() }
        func firstByte(_ extra: String) throws -> Double {
            let url =
                "http://127.0.0.1:\(server.port)/rest/stream.view?id=tr-\(track.id.rawValue)&apiKey=\(ServeBench.escape(key))&v=1.16.1&c=shelf-bench\(extra)"
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/curl"), ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_starttransfer}", url])
            let parts = result.stdout.split(separator: " ")
            guard result.status == 0, parts.count == 2, parts[0] == "200", let seconds = Double(parts[1]) else {
                throw BenchUsageError(message: "stream\(extra): \(result.stdout) \(result.stderr)")
            }
            return seconds * 1000
        }
        func median(_ extra: String) throws -> Double {
            _ = try firstByte(extra)
            let samples = try (0..<10).map { _ in try firstByte(extra) }.sorted()
            return samples[samples.count / 2]
        }
        return (try median("&format=raw"), try median("&format=mp3"))
    }
}
