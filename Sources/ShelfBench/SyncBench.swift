import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench sync`: the `shelfSync` extension (getLibraryChanges) of a real `shelf serve`,
/// asked for what changed since a token after 1, 10, 100 and 1,000 edited songs (in one
/// transaction, and 100 in 100 transactions), on a large and a small library side by side: the
/// time should follow the answer, not the library.
struct SyncBench {
    let large: (URL, Int)
    let small: (URL, Int)
    static let answerSizes = [1, 10, 100, 1_000]

    /// Reads `--library DIR [--tracks N] --small-library DIR [--small-tracks M]`.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--library", "--tracks", "--small-library", "--small-tracks"])
        guard let path = flags.string("--library"), let smallPath = flags.string("--small-library") else {
            throw BenchUsageError(message: "--library and --small-library are required")
        }
        large = (URL(fileURLWithPath: path), max(2_000, try flags.int("--tracks", default: 500_500)))
        small = (URL(fileURLWithPath: smallPath), max(2_000, try flags.int("--small-tracks", default: 5_000)))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("sync: \(text)\n".utf8)) }

    func run(_ results: inout Report) async throws {
        let shelf = try ServeBench.shelfBinary()
        var rows: [[any ReportValue]] = []
        for (directory, tracks) in [large, small] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let library = Library(directory: directory, configuration: .init(buildsMirrorInBackground: false))
            if try await library.info().trackCount == 0 {
                log("generating \(tracks) tracks in \(directory.path)")
                let started = Date()
                _ = try await DatasetGenerator(tracks: tracks).fill(library)
                log("generated in \(Int(Date().timeIntervalSince(started))) s")
            }
            _ = try await library.completeMirror()
            let key = try await ServeBench.apiKey(library, directory)
            let count = try await library.info().trackCount
            let ids = try await library.list(LibraryQuery(sort: .title), limit: 20_000).items.map(\.id)
            let server = try ServerProcess(shelf: shelf, library: directory)
            defer { _ = server.stop() }
            let client = try SubsonicBench.Client(port: server.port, key: key)
            var round = 0
            /// Edits `songs` songs (titles) in `transactions` write transactions, then asks for the changes since before them.
            func measure(songs: Int, transactions: Int) async throws {
                round += 1
                let token = try await library.currentToken()
                let picked = Array(ids.shuffled().prefix(songs))
                let perTransaction = max(1, songs / transactions)
                var start = 0
                while start < picked.count {
                    let slice = Array(picked[start..<min(picked.count, start + perTransaction)])
                    let stamp = "bench edit \(round)"
                    try await library.write { batch in
                        for id in slice { _ = try batch.updateTrack(id) { $0.comment = stamp } }
                    }
                    start += perTransaction
                }
                // Every page of the answer, as a client catches up (200 transactions a page).
                var answer = (songs: 0, albums: 0, artists: 0, pages: 0)
                let ms = try SubsonicBench.median(runs: 9, warmup: 2) {
                    var next = token.description
                    var total = 0.0
                    answer = (0, 0, 0, 0)
                    while true {
                        let (ms, response) = try client.call("getLibraryChanges", "token=\(ServeBench.escape(next))")
                        total += ms
                        let changes = response["libraryChanges"] as? [String: Any] ?? [:]
                        func count(_ name: String) -> Int {
                            let group = changes[name] as? [String: Any] ?? [:]
                            return ["inserted", "updated", "deleted"].reduce(0) { $0 + ((group[$1] as? [Any])?.count ?? 0) }
                        }
                        answer.songs += count("songs")
                        answer.albums += count("albums")
                        answer.artists += count("artists")
                        answer.pages += 1
                        guard changes["hasMore"] as? Bool == true, let token = changes["token"] as? String else { break }
                        next = token
                    }
                    return total
                }
                rows.append([count, songs, transactions, answer.songs, answer.albums, answer.artists, answer.pages, ms])
            }
            for size in Self.answerSizes { try await measure(songs: size, transactions: 1) }
            try await measure(songs: 100, transactions: 100)
        }
        results.table(
            "getLibraryChanges since a token, every page of the answer (median of 9 runs, ms), the large and the small library", key: "runs",
            [
                .init("library tracks", "libraryTracks"), .init("edited songs", "editedSongs"), .init("transactions", "transactions"),
                .init("songs", "answerSongs"), .init("albums", "answerAlbums"), .init("artists", "answerArtists"), .init("pages", "pages"),
                .init("ms", "medianMs", decimals: 2),
            ], rows)
    }
}
