import Foundation
import Shelf
import ShelfCore
import ShelfDatabase
import ShelfTestSupport

/// `shelf-bench history`: the cost of `changes(since:)` over the last 100 transactions and of
/// `changeSummary(since:)` over the last 10,000, on a large library with a long log beside a small
/// one with the same recent history. The answers are the same size, so the large/small ratios show
/// whether cost follows the answer (about 1) or the library and log (far above 1).
struct HistoryBench {
    let largeTracks: Int
    let smallTracks: Int
    let bulkUpdates: Int
    let tail: Int
    let largeDirectory: URL?
    let smallDirectory: URL?

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--small-tracks", "--bulk-updates", "--tail", "--library", "--small-library"])
        largeTracks = try flags.int("--tracks", default: 500_500)
        smallTracks = try flags.int("--small-tracks", default: 1_000)
        bulkUpdates = try flags.int("--bulk-updates", default: 520_000)
        tail = try flags.int("--tail", default: 10_000)
        largeDirectory = flags.string("--library").map { URL(fileURLWithPath: $0) }
        smallDirectory = flags.string("--small-library").map { URL(fileURLWithPath: $0) }
        guard tail >= 100, smallTracks >= 1_000 else {
            throw BenchUsageError(message: "--tail must be at least 100 and --small-tracks at least 1000")
        }
    }

    struct Line {
        let library: String
        let tracks: Int
        let logEntries: Int
        let changesLast100Ms: Double
        let summaryLastTailMs: Double
        let rawChangesLast100Ms: Double
        let rawSummaryLastTailMs: Double
        let changesAnswer: Int
        let summaryAnswer: Int
    }

    func run(_ results: inout Report) async throws {
        let scratch = try TemporaryDirectory(prefix: "shelf-bench-history")
        let large = try await prepare(largeDirectory ?? scratch.path("large"), tracks: largeTracks, updates: bulkUpdates)
        let small = try await prepare(smallDirectory ?? scratch.path("small"), tracks: smallTracks, updates: 0)
        let lines = [try await measure(large, name: "large"), try await measure(small, name: "small")]
        results.table(
            key: "libraries",
            [
                .init("library", "library"), .init("tracks", "tracks"), .init("log entries", "logEntries"),
                .init("changes (last 100 tx) ms", "changesLast100Ms", decimals: 3), .init("raw SQL ms", "changesRawMs", decimals: 3),
                .init("summary (last \(tail) tx) ms", "summaryLastTailMs", decimals: 3), .init("raw SQL ms", "summaryRawMs", decimals: 3),
                .init("changes answer (transactions)", "changesAnswerTransactions"), .init("summary answer (tracks)", "summaryAnswerTracks"),
            ],
            lines.map {
                [
                    $0.library, $0.tracks, $0.logEntries, $0.changesLast100Ms, $0.rawChangesLast100Ms, $0.summaryLastTailMs,
                    $0.rawSummaryLastTailMs, $0.changesAnswer, $0.summaryAnswer,
                ]
            })
        results.sentence(
            """
            ratio large/small: changes \(figure: "changesLargeToSmallRatio", lines[0].changesLast100Ms / lines[1].changesLast100Ms, decimals: 2), \
            summary \(figure: "summaryLargeToSmallRatio", lines[0].summaryLastTailMs / lines[1].summaryLastTailMs, decimals: 2) \
            (target: under 2; the summary over the last \(figure: "tailTransactions", tail) transactions)
            """)
    }

    /// A library with `tracks` tracks, `updates` play-count updates in batches of 1,000, then the
    /// shared recent history: `tail` transactions of one play-count update each, cycling over the
    /// first 1,000 tracks so that both libraries' recent answers are the same size.
    private func prepare(_ directory: URL, tracks: Int, updates: Int) async throws -> Library {
        let library = Library(directory: directory)
        if try await library.info().trackCount > 0 {
            log("reusing \(directory.path)")
            return library
        }
        log("generating \(tracks) tracks in \(directory.path)")
        _ = try await DatasetGenerator(tracks: tracks, seed: 11).fill(library)
        var random = SeededRandom(seed: 12)
        var done = 0
        while done < updates {
            let ids = (0..<min(1_000, updates - done)).map { _ in TrackID(Int64(random.int(1...tracks))) }
            try await library.write { batch in
                for id in Set(ids) { try batch.updateTrack(id) { $0.playCount += 1 } }
            }
            done += ids.count
        }
        log("writing \(tail) single-update transactions")
        for n in 0..<tail {
            try await library.write { batch in try batch.updateTrack(TrackID(Int64(1 + n % 1_000))) { $0.playCount += 1 } }
        }
        return library
    }

    private func measure(_ library: Library, name: String) async throws -> Line {
        let current = try await library.currentToken()
        let last100 = ChangeToken(storeID: current.storeID, transaction: current.transaction - 100)
        let lastTail = ChangeToken(storeID: current.storeID, transaction: current.transaction - Int64(tail))
        var changesAnswer = 0
        var summaryAnswer = 0
        let changes = try await Measure.median(runs: 300, warmup: 20) {
            changesAnswer = try await library.changes(since: last100).changes.count
        }
        let summary = try await Measure.median(runs: 31, warmup: 3) {
            summaryAnswer = try await library.changeSummary(since: lastTail).tracks.updated.count
        }
        // The limit: the same rows stepped through sqlite3 without building a single Swift value.
        let db = try Connection(path: library.storeURL.path, mode: .readOnly)
        let rawSQL =
            "SELECT l.tx, t.committed_at, l.object_type, l.object_id, l.op, l.groups FROM change_log AS l JOIN change_transaction AS t ON t.id = l.tx WHERE l.tx > ? AND l.tx <= ? ORDER BY l.tx, l.seq"
        func raw(_ from: Int64) throws {
            let statement = try db.cachedStatement(rawSQL)
            try statement.bind([from, current.transaction])
            while try statement.step() {}
            statement.reset()
        }
        let rawChanges = try await Measure.median(runs: 300, warmup: 20) { try raw(last100.transaction) }
        let rawSummary = try await Measure.median(runs: 31, warmup: 3) { try raw(lastTail.transaction) }
        let entries = try db.scalar(Int.self, "SELECT count(*) FROM change_log") ?? 0
        let tracks = try await library.info().trackCount
        return Line(
            library: name, tracks: tracks, logEntries: entries, changesLast100Ms: changes, summaryLastTailMs: summary,
            rawChangesLast100Ms: rawChanges, rawSummaryLastTailMs: rawSummary, changesAnswer: changesAnswer, summaryAnswer: summaryAnswer)
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }
}
