import Foundation
import Shelf
import ShelfTestSupport

/// `shelf-bench generate`: fills a fresh library with the deterministic catalogue.
struct Generate {
    let tracks: Int
    let seed: UInt64
    let directory: URL
    let chunk: Int
    let artwork: DatasetGenerator.Artwork?

    init(_ words: [String]) throws {
        let flags = try Flags(
            words, known: ["--tracks", "--seed", "--library", "--chunk", "--artwork-px"], switches: ["--artwork-per-track", "--artwork-flat"])
        let side = try flags.int("--artwork-px", default: 0)
        artwork = side > 0 ? DatasetGenerator.Artwork(side: side, perTrack: flags.bool("--artwork-per-track"), noise: !flags.bool("--artwork-flat")) : nil
        tracks = try flags.int("--tracks")
        seed = UInt64(try flags.int("--seed", default: 1))
        chunk = max(1, try flags.int("--chunk", default: 5_000))
        guard let path = flags.string("--library") else { throw BenchUsageError(message: "--library is required") }
        directory = URL(fileURLWithPath: path)
    }

    struct Line {
        let tracks: Int
        let albums: Int
        let artists: Int
        let seconds: Double
        let generatorSeconds: Double
        let mirrorBuildSeconds: Double
        let tracksPerSecond: Double
        let bytesOnDisk: Int64
        let bytesPerTrack: Double
    }

    func run(_ results: inout Report) async throws {
        // The mirror is built once, in bulk, after the tracks are in: far cheaper than keeping it
        // current through every chunk, and the library is then ready to browse.
        let library = Library(directory: directory, configuration: .init(buildsMirrorInBackground: false))
        let before = try await library.info()
        if before.trackCount > 0 {
            throw BenchUsageError(message: "\(directory.path) already holds \(before.trackCount) tracks; generate into a fresh directory")
        }
        let report = try await DatasetGenerator(tracks: tracks, seed: seed, artwork: artwork).fill(library, chunkSize: chunk) { done in
            if isatty(STDERR_FILENO) == 1 {
                FileHandle.standardError.write(Data("\rgenerating \(done)/\(tracks)".utf8))
            }
        }
        if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\n".utf8)) }
        let mirrorStart = DispatchTime.now().uptimeNanoseconds
        try await library.completeMirror { progress in
            if isatty(STDERR_FILENO) == 1 {
                FileHandle.standardError.write(Data("\rmirror: \(progress.phase.rawValue) \(progress.done)/\(progress.total)   ".utf8))
            }
        }
        if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\n".utf8)) }
        let mirrorSeconds = Double(DispatchTime.now().uptimeNanoseconds - mirrorStart) / 1e9
        let info = try await library.info()
        let line = Line(
            tracks: info.trackCount, albums: report.albums, artists: report.artists, seconds: report.seconds, generatorSeconds: report.generatorSeconds,
            mirrorBuildSeconds: mirrorSeconds,
            tracksPerSecond: Double(report.tracks) / max(report.seconds, 1e-9), bytesOnDisk: info.bytesOnDisk,
            bytesPerTrack: Double(info.bytesOnDisk) / Double(max(info.trackCount, 1)))
        results.table(
            key: nil,
            [
                .init("tracks", "tracks"), .init("albums", "albums"), .init("artists", "artists"), .init("seconds", "seconds", decimals: 2),
                .init("of which generating", "generatorSeconds", decimals: 2), .init("tracks/s", "tracksPerSecond"),
                .init("mirror build s", "mirrorBuildSeconds", decimals: 2), .init("bytes on disk", "bytesOnDisk"), .init("bytes/track", "bytesPerTrack"),
            ],
            [
                [
                    line.tracks, line.albums, line.artists, line.seconds, line.generatorSeconds, line.tracksPerSecond, line.mirrorBuildSeconds,
                    line.bytesOnDisk, line.bytesPerTrack,
                ]
            ])
    }
}
