import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench listens`: issue 41's table. A generated library and a listen log of `--listens`
/// plays over three years; a play counted one a transaction as the server counts it (with and
/// without a linked service, beside a star as the plainest per-user write), the log's first page and
/// a page at 90 %, the statistics of each period, the export, and `shelf import-from listenbrainz`
/// of the export into another user, a first time and again (which must write nothing).
struct ListensBench {
    let tracks: Int
    let listens: Int
    let directory: URL?
    let runs: Int

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--listens", "--library", "--runs"])
        tracks = try flags.int("--tracks", default: 50_000)
        listens = try flags.int("--listens", default: 200_000)
        guard tracks >= 1_000, listens >= 1_000 else { throw BenchUsageError(message: "--tracks and --listens expect at least 1000") }
        directory = flags.string("--library").map { URL(fileURLWithPath: $0) }
        runs = max(3, try flags.int("--runs", default: 11))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    func run(_ report: inout Report) async throws {
        let scratch = try TemporaryDirectory(prefix: "shelf-bench-listens")
        let dir = directory ?? scratch.url
        let library = Library(directory: dir, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            log("generating \(tracks) tracks")
            _ = try await DatasetGenerator(tracks: tracks, seed: 11).fill(library)
        }
        let users = try await library.users()
        func user(_ name: String) async throws -> User {
            if let found = users.first(where: { $0.name == name }) { return found }
            return try await library.addUser(name: name, password: "bench-password", admin: name == "ann")
        }
        let ann = try await user("ann")
        let ids = try await library.snapshot(LibraryQuery())
        let now = Date()
        if try await library.listenCount(of: ann.id) < listens {
            log("recording \(listens) listens over three years, 1,000 a transaction")
            let span = 3 * 365 * 86_400.0
            var random = SeededRandom(seed: 41)
            let start = DispatchTime.now().uptimeNanoseconds
            for chunk in stride(from: 0, to: listens, by: 1_000) {
                // A few tracks played often and most rarely, as people listen.
                let plays = (chunk..<min(chunk + 1_000, listens)).map { n -> (TrackID, Date) in
                    let skewed = Int(pow(random.double(0..<1), 3) * Double(ids.count))
                    return (ids[min(skewed, ids.count - 1)], now.addingTimeInterval(-span + span * Double(n) / Double(listens)))
                }
                try await library.write { batch in
                    for (id, at) in plays { try batch.recordPlay(id, by: ann.id, at: at, heard: 200, source: .api, client: "bench") }
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            report.sentence("recorded \(figure: "listens", listens) listens in \(figure: "recordSeconds", seconds, decimals: 1) s, 1,000 a transaction")
        }

        log("a play a transaction, as the server counts them")
        var writeLines: [(String, Double)] = []
        var next = 0
        func play(_ user: UserID) async throws {
            next += 1
            let id = ids[next % ids.count]
            try await library.write { batch in try batch.recordPlay(id, by: user, at: Date(), heard: 200, source: .scrobble, client: "bench") }
        }
        let bob = try await user("bob")
        writeLines.append(
            (
                "a star (one user_track row; the baseline)",
                try await Measure.median(runs: runs * 5) {
                    next += 1
                    let id = ids[next % ids.count]
                    try await library.write { batch in try batch.setStarred([id], by: bob.id, next % 2 == 0) }
                }
            ))
        writeLines.append(("a play, nothing linked (listen + counts)", try await Measure.median(runs: runs * 5) { try await play(bob.id) }))
        try await library.write { batch in
            try batch.linkScrobbling(bob.id, .listenbrainz, secret: "bench-token", account: "bob", url: "http://127.0.0.1:9")
            try batch.linkScrobbling(bob.id, .lastfm, secret: "bench-session", account: "bob", url: "http://127.0.0.1:9")
        }
        writeLines.append(("a play, two services linked (+ two outbox rows)", try await Measure.median(runs: runs * 5) { try await play(bob.id) }))

        log("the log and the statistics")
        var readLines: [(String, Double, String, Bool)] = []
        func read(_ measure: String, target: Double, _ body: @escaping @Sendable () async throws -> Void) async throws {
            let ms = try await Measure.median(runs: runs) { try await body() }
            readLines.append((measure, ms, "≤ \(target.formatted()) ms", ms <= target))
        }
        try await read("the log's first page of 50", target: 5) { _ = try await library.listens(of: ann.id, limit: 50) }
        var cursor: String?
        var seen = 0
        while seen < listens * 9 / 10 {
            let page = try await library.listens(of: ann.id, after: cursor, limit: 10_000)
            seen += page.listens.count
            cursor = page.nextCursor
            if cursor == nil { break }
        }
        let deep = cursor
        try await read("a page of 50 at 90 % (by cursor)", target: 5) { _ = try await library.listens(of: ann.id, after: deep, limit: 50) }
        for period in StatsPeriod.allCases {
            let target: Double = period == .all ? 1_000 : period == .year ? 500 : 100
            try await read("statistics, \(period.rawValue)", target: target) { _ = try await library.listeningStats(of: ann.id, period: period, now: now) }
        }

        log("export and import")
        let export = dir.appendingPathComponent("listens-export.jsonl")
        _ = FileManager.default.createFile(atPath: export.path, contents: nil)
        let handle = try FileHandle(forWritingTo: export)
        var exported = 0
        let exportStart = DispatchTime.now().uptimeNanoseconds
        try await library.forEachListen(of: ann.id) { chunk in
            var text = ""
            for listen in chunk { text += try ListenExport.listenBrainzLine(listen) + "\n" }
            handle.write(Data(text.utf8))
            exported += chunk.count
        }
        try handle.close()
        let exportSeconds = Double(DispatchTime.now().uptimeNanoseconds - exportStart) / 1e9
        // A user of its own each run, so that a reused library's first import is a first one.
        let carol = try await library.addUser(name: "importer-\(UUID().uuidString.prefix(8).lowercased())", password: "bench-password")
        var importLines: [(String, Double, Int, Int)] = []
        for pass in ["first import", "the same file again"] {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try await library.importFrom(.listenbrainz, at: export, options: ForeignImportOptions(user: carol.name))
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            importLines.append((pass, seconds, result.matched + result.ambiguous + result.unmatched, result.applied.listens))
        }
        try? FileManager.default.removeItem(at: export)

        report.table(
            key: "writes", [.init("write", "write"), .init("ms", "ms", decimals: 3)], writeLines.map { [$0.0, $0.1] })
        report.table(
            key: "reads",
            [.init("read", "read"), .init("ms", "ms", decimals: 3), .init("target", "target"), .init("met", "met")],
            readLines.map { [$0.0, $0.1, $0.2, $0.3 ? "yes" : "no"] })
        report.table(
            key: "imports",
            [
                .init("run", "run"), .init("seconds", "seconds", decimals: 2), .init("tracks matched or not", "items"),
                .init("listens written", "listensWritten"),
            ],
            importLines.map { [$0.0, $0.1, $0.2, $0.3] })
        let first = importLines.first?.1 ?? 0
        report.sentence(
            "\(figure: "tracks", tracks) tracks, \(figure: "logListens", try await library.listenCount(of: ann.id)) listens of one user; exported \(figure: "exported", exported) in \(figure: "exportSeconds", exportSeconds, decimals: 2) s and imported them into another user at \(figure: "importListensPerSecond", Double(exported) / max(first, 1e-9)) listens/s; the second import wrote \(figure: "secondImportListens", importLines.last?.3 ?? -1) listens."
        )
    }
}
