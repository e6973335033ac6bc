import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench legacy-store`: a schema-1 store (pictures inline in the track rows) made from the
/// deterministic catalogue, for the migration's tests and benchmark.
struct LegacyStoreCommand {
    let tracks: Int
    let kib: Int
    let distinct: Int
    let directory: URL

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--artwork-kib", "--distinct", "--library"])
        tracks = try flags.int("--tracks")
        kib = try flags.int("--artwork-kib", default: 100)
        distinct = max(1, try flags.int("--distinct", default: tracks))
        guard let path = flags.string("--library") else { throw BenchUsageError(message: "--library is required") }
        directory = URL(fileURLWithPath: path)
    }

    func run(_ results: inout Report) throws {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("library.sqlite").path) {
            throw BenchUsageError(message: "\(directory.path) already holds a store; use a fresh directory")
        }
        let started = Date()
        let catalogue = DatasetGenerator(tracks: tracks, seed: 11).allTracks()
        var pictureBytes = 0
        try LegacyStore.create(at: directory, tracks: catalogue) { index in
            let picture = LegacyPictures.picture(index: index, kib: kib, distinct: distinct)
            pictureBytes += picture.count
            return picture
        }
        let seconds = Date().timeIntervalSince(started)
        let mean = Double(pictureBytes) / Double(max(1, catalogue.count))
        results.sentence(
            """
            legacy store: \(figure: "tracks", catalogue.count) tracks, \(figure: "pictureKiB", kib) KiB pictures \
            (\(figure: "distinctPictures", min(distinct, catalogue.count)) distinct, \(figure: "meanPictureBytes", mean) bytes on average, \
            \(figure: "inlineBytes", pictureBytes) in all) in \(figure: "seconds", seconds, decimals: 1) s
            """)
    }
}
