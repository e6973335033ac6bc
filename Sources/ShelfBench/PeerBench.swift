import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench subsonic --peer supysonic`: the same real files served by Shelf and by supysonic
/// (a Python Subsonic server from PyPI, installed into the project's `.venv`), on two loopback
/// ports, the same calls against both in one run: each call's median on each server, the ratio,
/// and whether the answers' counts agree where both servers are meant to agree.
struct PeerBench {
    let directory: URL
    let files: Int

    private func log(_ text: String) { FileHandle.standardError.write(Data("peer: \(text)\n".utf8)) }

    /// The password of the `bench` user of both servers (loopback only, a throwaway library).
    static let password = "bench-peer-password"

    /// One measured call: what it is, the path and query after `/rest/`, and how an answer is counted.
    struct Call {
        let name: String
        let shelf: String
        let peer: String
        /// The number of items the answer holds (nil: nothing to compare).
        let count: (@Sendable ([String: Any]) -> Int)?
    }

    func run(_ results: inout Report) async throws {
        let python = WebBench.repository.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw BenchUsageError(message: "needs the project's .venv (make subsonic-client) to install supysonic into")
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let music = directory.appendingPathComponent("peer-music")
        if !FileManager.default.fileExists(atPath: music.path) {
            log("writing \(files) real audio files")
            _ = try SampleFiles.write(tracks: files, to: music, seconds: 1)
        }
        // Shelf's side: the files imported once, with an API key.
        let shelfDir = directory.appendingPathComponent("peer-shelf")
        let library = Library(directory: shelfDir, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            log("importing into Shelf")
            _ = try await library.importFiles(at: [music])
        }
        let key = try await ServeBench.apiKey(library, shelfDir)
        let trackCount = try await library.info().trackCount

        // supysonic's side: installed into .venv, configured in its own folder, scanned once.
        let peerDir = directory.appendingPathComponent("peer-supysonic")
        try FileManager.default.createDirectory(at: peerDir, withIntermediateDirectories: true)
        let bin = python.deletingLastPathComponent()
        if try ChildProcess.run(python, ["-c", "import supysonic, waitress"]).status != 0 {
            log("installing supysonic and waitress from PyPI into .venv")
            let installed = try ChildProcess.run(bin.appendingPathComponent("pip"), ["install", "--quiet", "supysonic", "waitress"])
            guard installed.status == 0 else { throw BenchUsageError(message: "pip install supysonic failed: \(installed.stderr.suffix(2000))") }
        }
        let config = """
            [base]
            database_uri = sqlite:///\(peerDir.appendingPathComponent("supysonic.db").path)
            [webapp]
            cache_dir = \(peerDir.appendingPathComponent("cache").path)
            mount_webui = no
            log_level = ERROR
            [daemon]
            socket = \(peerDir.appendingPathComponent("daemon.sock").path)
            run_watcher = no
            """
        try Data(config.utf8).write(to: peerDir.appendingPathComponent("supysonic.conf"))
        let cli = bin.appendingPathComponent("supysonic-cli")
        func supysonic(_ arguments: [String]) throws -> ProcessResult {
            try ChildProcess.run(cli, arguments, currentDirectory: peerDir)
        }
        let scanned = peerDir.appendingPathComponent("scanned")
        if !FileManager.default.fileExists(atPath: scanned.path) {
            log("supysonic: user, folder and a scan of \(files) files (once)")
            _ = try supysonic(["user", "add", "bench", "-p", Self.password])
            _ = try supysonic(["user", "setroles", "-A", "bench"])
            _ = try supysonic(["folder", "add", "music", music.path])
            let scan = try supysonic(["folder", "scan", "--foreground", "music"])
            guard scan.status == 0 else { throw BenchUsageError(message: "supysonic scan failed: \(scan.stderr.suffix(2000))") }
            try Data().write(to: scanned)
        }

        let shelfServer = try ServerProcess(shelf: try ServeBench.shelfBinary(), library: shelfDir)
        defer { _ = shelfServer.stop() }
        let peerPort = try Self.freePort()
        let peer = Process()
        peer.executableURL = bin.appendingPathComponent("supysonic-server")
        peer.arguments = ["-S", "waitress", "-h", "127.0.0.1", "-p", String(peerPort), "--threads", "4"]
        peer.currentDirectoryURL = peerDir
        peer.standardOutput = FileHandle.nullDevice
        peer.standardError = FileHandle.nullDevice
        try peer.run()
        defer {
            // waitress does not stop on SIGTERM while it holds connections; the bench's own child goes at once.
            kill(peer.processIdentifier, SIGKILL)
            peer.waitUntilExit()
        }
        let shelfClient = try SubsonicBench.Client(port: shelfServer.port, auth: "apiKey=\(ServeBench.escape(key))")
        let peerAuth = "u=bench&p=\(ServeBench.escape(Self.password))"
        // A connection per call to supysonic: waitress may close a kept-alive one between calls,
        // and the connect is a fraction of its answer's time.
        let peerClient = PerCall(port: peerPort, auth: peerAuth)
        var up = false
        for _ in 0..<600 where !up {
            up = (try? peerClient.call("ping")) != nil
            if !up { usleep(100_000) }
        }
        guard up else { throw BenchUsageError(message: "supysonic did not answer ping on port \(peerPort)") }

        // The IDs each server names for the same first album, and one of its songs.
        func firstAlbum(_ client: some SubsonicCaller) throws -> (album: String, cover: String?, song: String?, name: String) {
            let albums =
                ((try client.call("getAlbumList2", "type=alphabeticalByName&size=1").response["albumList2"] as? [String: Any])?["album"] as? [[String: Any]])
                ?? []
            guard let album = albums.first?["id"].map({ "\($0)" }) else { throw BenchUsageError(message: "no album") }
            let songs = ((try client.call("getAlbum", "id=\(album)").response["album"] as? [String: Any])?["song"] as? [[String: Any]]) ?? []
            return (album, albums.first?["coverArt"].map { "\($0)" }, songs.first?["id"].map { "\($0)" }, albums.first?["name"].map { "\($0)" } ?? "")
        }
        let shelfFirst = try firstAlbum(shelfClient)
        let peerFirst = try firstAlbum(peerClient)
        func items(_ element: String, _ member: String) -> @Sendable ([String: Any]) -> Int {
            { (($0[element] as? [String: Any])?[member] as? [Any])?.count ?? 0 }
        }
        @Sendable func indexCount(_ response: [String: Any]) -> Int {
            (((response["artists"] as? [String: Any])?["index"] as? [[String: Any]]) ?? []).reduce(0) { $0 + (($1["artist"] as? [Any])?.count ?? 0) }
        }
        // A word both libraries hold: the first word of Shelf's first album.
        let word = String(shelfFirst.name.split(separator: " ").first ?? "a").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "a"
        let calls: [Call] = [
            Call(name: "ping", shelf: "ping", peer: "ping", count: nil),
            Call(name: "getArtists", shelf: "getArtists", peer: "getArtists", count: { indexCount($0) }),
            Call(
                name: "getAlbumList2 alphabeticalByName size=50 offset=0", shelf: "getAlbumList2|type=alphabeticalByName&size=50&offset=0",
                peer: "getAlbumList2|type=alphabeticalByName&size=50&offset=0", count: items("albumList2", "album")),
            Call(
                name: "getAlbumList2 alphabeticalByName size=50 offset=50", shelf: "getAlbumList2|type=alphabeticalByName&size=50&offset=50",
                peer: "getAlbumList2|type=alphabeticalByName&size=50&offset=50", count: items("albumList2", "album")),
            Call(
                name: "getAlbumList2 alphabeticalByName size=50 offset=100", shelf: "getAlbumList2|type=alphabeticalByName&size=50&offset=100",
                peer: "getAlbumList2|type=alphabeticalByName&size=50&offset=100", count: items("albumList2", "album")),
            Call(name: "getRandomSongs size=50", shelf: "getRandomSongs|size=50", peer: "getRandomSongs|size=50", count: items("randomSongs", "song")),
            Call(
                name: "search3 a word of the library (\(shelfFirst.name.split(separator: " ").first ?? ""))", shelf: "search3|query=\(word)&songCount=50",
                peer: "search3|query=\(word)&songCount=50", count: items("searchResult3", "song")),
            Call(
                name: "search3 \"\" 500 songs", shelf: "search3|query=%22%22&songCount=500&artistCount=0&albumCount=0",
                peer: "search3|query=%22%22&songCount=500&artistCount=0&albumCount=0", count: items("searchResult3", "song")),
            Call(
                name: "getAlbum (the first album by name)", shelf: "getAlbum|id=\(shelfFirst.album)", peer: "getAlbum|id=\(peerFirst.album)",
                count: { (($0["album"] as? [String: Any])?["song"] as? [Any])?.count ?? 0 }),
        ]
        var rows: [[any ReportValue]] = []
        var ratios: [Double] = []
        for call in calls {
            log(call.name)
            func split(_ text: String) -> (String, String) {
                let parts = text.split(separator: "|", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
            let (shelfName, shelfQuery) = split(call.shelf)
            let (peerName, peerQuery) = split(call.peer)
            let shelfAnswer = try shelfClient.call(shelfName, shelfQuery).response
            let peerAnswer = try? peerClient.call(peerName, peerQuery).response
            let shelfMs = try SubsonicBench.median(runs: 20, warmup: 2) { try shelfClient.call(shelfName, shelfQuery).ms }
            let peerMs = peerAnswer == nil ? nil : try? SubsonicBench.median(runs: 20, warmup: 2) { try peerClient.call(peerName, peerQuery).ms }
            let shelfCount = call.count.map { $0(shelfAnswer) }
            let peerCount = call.count.flatMap { count in peerAnswer.map { count($0) } }
            let agree: String =
                switch (shelfCount, peerCount) {
                case (nil, _): "–"
                case (_, nil): "peer failed"
                case let (a?, b?) where a == b: "yes (\(a))"
                case let (a?, b?): "no: Shelf \(a), supysonic \(b)"
                }
            let ratio = peerMs.map { $0 / shelfMs }
            // A peer that answers nothing where Shelf answers (supysonic's empty search) is not faster: left out.
            let peerEmpty = peerCount == 0 && (shelfCount ?? 0) > 0
            if let ratio, !peerEmpty { ratios.append(ratio) }
            rows.append([call.name, shelfMs, peerMs, ratio, agree])
        }
        // Binary answers through curl: a cached cover, and a stream's first byte.
        func curlMs(_ port: Int, _ path: String, firstByte: Bool) throws -> Double {
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                [
                    "-sS", "-m", "60", "-o", "/dev/null", "-w", "%{http_code} %{\(firstByte ? "time_starttransfer" : "time_total")}",
                    "http://127.0.0.1:\(port)/rest/\(path)",
                ])
            let parts = result.stdout.split(separator: " ")
            guard result.status == 0, parts.count == 2, parts[0] == "200", let seconds = Double(parts[1]) else {
                throw BenchUsageError(message: "\(path): \(result.stdout) \(result.stderr)")
            }
            return seconds * 1000
        }
        func curlMedian(_ port: Int, _ path: String, firstByte: Bool) throws -> Double {
            _ = try curlMs(port, path, firstByte: firstByte)
            return try SubsonicBench.median(runs: 10, warmup: 0) { try curlMs(port, path, firstByte: firstByte) }
        }
        let shelfQuery = "apiKey=\(ServeBench.escape(key))&v=1.16.1&c=shelf-bench"
        let peerQuery = "\(peerAuth)&v=1.16.1&c=shelf-bench"
        if let shelfCover = shelfFirst.cover, let peerCover = peerFirst.cover {
            let shelfMs = try curlMedian(shelfServer.port, "getCoverArt.view?id=\(shelfCover)&size=300&\(shelfQuery)", firstByte: false)
            let peerMs = try? curlMedian(peerPort, "getCoverArt.view?id=\(peerCover)&size=300&\(peerQuery)", firstByte: false)
            if let peerMs { ratios.append(peerMs / shelfMs) }
            rows.append(["getCoverArt size=300 (cached, through curl)", shelfMs, peerMs, peerMs.map { $0 / shelfMs }, "–"])
        }
        if let shelfSong = shelfFirst.song, let peerSong = peerFirst.song {
            let shelfMs = try curlMedian(shelfServer.port, "stream.view?id=\(shelfSong)&format=raw&\(shelfQuery)", firstByte: true)
            let peerMs = try? curlMedian(peerPort, "stream.view?id=\(peerSong)&format=raw&\(peerQuery)", firstByte: true)
            if let peerMs { ratios.append(peerMs / shelfMs) }
            rows.append(["stream raw, time to first byte (through curl)", shelfMs, peerMs, peerMs.map { $0 / shelfMs }, "–"])
        }
        let version =
            (try? ChildProcess.run(python, ["-c", "import importlib.metadata as m; print(m.version('supysonic'))"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? "?"
        results.table(
            "Shelf beside supysonic \(version) on the same \(trackCount) real files, one keep-alive connection to Shelf and one connection per call to supysonic (its waitress closes kept-alive ones), f=json (medians of 20; binary answers of 10)",
            key: "peer",
            [
                .init("call", "call"), .init("Shelf ms", "shelfMs", decimals: 2), .init("supysonic ms", "peerMs", decimals: 2),
                .init("supysonic ÷ Shelf (×)", "ratio", decimals: 1), .init("counts agree", "countsAgree"),
            ], rows)
        let lowest = ratios.min() ?? .nan
        results.table(
            "targets", key: "targets",
            [
                .init("target", "target"), .init("measured", "measured", decimals: 1), .init("limit", "limit", decimals: 1), .init("met", "met"),
            ], [["every call's ratio supysonic ÷ Shelf (lowest, ×; calls the peer answers empty left out)", lowest, 10.0, lowest >= 10]])
    }

    /// A client that opens a new connection for every call.
    struct PerCall: SubsonicCaller {
        let port: Int
        let auth: String

        func call(_ name: String, _ parameters: String) throws -> (ms: Double, response: [String: Any]) {
            let started = DispatchTime.now().uptimeNanoseconds
            let (_, response) = try SubsonicBench.Client(port: port, auth: auth).call(name, parameters)
            return (Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6, response)
        }
    }

    /// A loopback port free now (bound, read and released).
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw BenchUsageError(message: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// What the peer benchmark calls: a kept-alive client or one connecting per call.
protocol SubsonicCaller {
    /// `/rest/NAME.view?…` answered: the milliseconds it took and the `subsonic-response` object.
    func call(_ name: String, _ parameters: String) throws -> (ms: Double, response: [String: Any])
}

extension SubsonicCaller {
    /// A call without parameters.
    func call(_ name: String) throws -> (ms: Double, response: [String: Any]) { try call(name, "") }
}

extension SubsonicBench.Client: SubsonicCaller {}
