import Foundation
import Shelf
import ShelfCore
import ShelfServer
import ShelfWire

/// The command that starts an analysis worker: this executable through `/proc/self/exe`, so that
/// a relative or PATH-found `shelf` starts itself, and still does after an upgrade replaced it.
func analysisWorkerCommand() -> [String] { AnalysisService.defaultCommand }

/// `shelf analyze [--filter EXPR] [--workers N] [--json]`: listens to every track whose audio has
/// no current sonic features.
struct AnalyzeCommand: Command {
    static let name = "analyze"
    static let abstract = "Listen to the tracks and store their sonic features (tempo, key, timbre, …) for similarity."
    static let synopsis = "[--filter EXPR] [--workers N] [--json]"
    static let discussion = """
        Decodes each track once (FFmpeg's libraries, in a child `shelf` worker process) to mono 22,050 Hz \
        and computes its sonic descriptors: tempo, onset rate, zero-crossing rate, spectral centroid, \
        bandwidth, roll-off and flatness, RMS level and range, 13 MFCCs and a chroma profile with the key \
        (docs/sonic.md defines each). Results are stored per audio identity and feature version: a moved, \
        retagged or duplicated file is not analysed again, and a file that fails (undecodable, shorter than \
        5 s, silent, or one a worker died on) is recorded with its reason and not retried. Each result is \
        stored as it arrives: Ctrl-C stops the run, and the next run carries on. `shelf similar` and \
        `shelf mix`, the API and the OpenSubsonic sonicSimilarity endpoints use the features.
        """
    static let flags = [
        FlagHelp("--filter", "EXPR", "Which tracks to analyse (the filter language of shelf tracks).", default: "all"),
        FlagHelp("--workers", "N", "Worker processes at once, one file each.", default: "1"),
    ]
    static let examples = ["shelf analyze", "shelf analyze --workers 2", "shelf analyze --filter 'genre:Jazz' --json"]

    let options: AnalysisOptions

    init(arguments: inout Arguments) throws {
        var options = AnalysisOptions(workerCommand: analysisWorkerCommand())
        if let text = try arguments.option("--filter") {
            do { options.filter = try FilterParser.parse(text) } catch { throw UsageError("--filter: \(error)") }
        }
        if let workers = try arguments.intOption("--workers", in: 1...64) { options.workers = workers }
        guard try arguments.positionals().isEmpty else { throw UsageError("analyze takes no words (use --filter)") }
        self.options = options
    }

    func run(library: Library, output: Output) async throws {
        let started = Date()
        let report = try await runInterruptible(
            label: "analysing", cancelledMessage: "analysis stopped; what was analysed stays, run it again to carry on"
        ) { [options] report in
            try await library.analyze(options) { done, total in report(done, total) }
        }
        if output.json { return try output.printJSON(report) }
        for failure in report.failed { output.line("\(failure.status.rawValue): \(failure.path): \(failure.reason)") }
        let seconds = Date().timeIntervalSince(started)
        let rate = report.seconds > 0 ? report.audioSeconds / report.seconds : 0
        output.line(
            "\(report.analyzed) analysed (\(report.failed.count) without features), \(report.skipped) already current"
                + String(format: ", in %.1f s (%.0f× real time)", seconds, rate))
    }
}

/// `shelf similar ID [--count N] [--json]`: the tracks that sound most like one.
struct SimilarCommand: Command {
    static let name = "similar"
    static let abstract = "List the tracks that sound most like one, with why."
    static let synopsis = "ID [--count N] [--same-album] [--json]"
    static let discussion = """
        The analysed tracks nearest the given one in the sonic features (`shelf analyze`), most similar \
        first, each with its similarity (1 is the track itself; 0.5 is as far as two tracks picked at random \
        usually are) and the traits they share. The same audio in another file is never listed. Tracks of \
        other albums and other artists come first; --same-album ranks by sound alone.
        """
    static let flags = [
        FlagHelp("--count", "N", "How many tracks.", default: "10"),
        FlagHelp("--same-album", nil, "Rank by sound alone, without preferring other albums and artists."),
    ]
    static let examples = ["shelf similar 42", "shelf similar 42 --count 25 --json"]

    let id: TrackID
    let count: Int
    let variety: Bool

    init(arguments: inout Arguments) throws {
        count = try arguments.intOption("--count", in: 1...500) ?? 10
        variety = !arguments.flag("--same-album")
        let words = try arguments.positionals()
        guard words.count == 1 else { throw UsageError("similar expects exactly one track ID") }
        id = try parseTrackID(words[0])
    }

    func run(library: Library, output: Output) async throws {
        let matches = try await library.sonicDocuments(try await library.similarTracks(to: id, count: count, preferVariety: variety))
        if output.json { return try output.printJSON(SimilarDocument(matches: matches)) }
        if matches.isEmpty { output.line("no similar tracks: track \(id) is not analysed yet (run shelf analyze)") }
        for match in matches { output.line(SonicLines.line(match)) }
    }
}

/// `shelf mix --from ID --to ID [--count N] [--json]`: a path of tracks from one sound to another.
struct MixCommand: Command {
    static let name = "mix"
    static let abstract = "Make a path of tracks that moves step by step from one track's sound to another's."
    static let synopsis = "--from ID --to ID [--count N] [--json]"
    static let discussion = """
        Starts with the first track, ends with the second, and between them picks the analysed tracks \
        nearest evenly spaced points on the way, each nearer the end than the one before, no audio twice. \
        Similarity is to the first track.
        """
    static let flags = [
        FlagHelp("--from", "ID", "The first track."),
        FlagHelp("--to", "ID", "The last track."),
        FlagHelp("--count", "N", "Tracks in the path at most, both ends included.", default: "25"),
    ]
    static let examples = ["shelf mix --from 42 --to 977", "shelf mix --from 42 --to 977 --count 10 --json"]

    let from: TrackID
    let to: TrackID
    let count: Int

    init(arguments: inout Arguments) throws {
        guard let from = try arguments.option("--from") else { throw UsageError("mix needs --from ID") }
        guard let to = try arguments.option("--to") else { throw UsageError("mix needs --to ID") }
        self.from = try parseTrackID(from)
        self.to = try parseTrackID(to)
        count = try arguments.intOption("--count", in: 1...500) ?? 25
        guard try arguments.positionals().isEmpty else { throw UsageError("mix takes no words (use --from and --to)") }
    }

    func run(library: Library, output: Output) async throws {
        let path = try await library.sonicDocuments(try await library.sonicPath(from: from, to: to, count: count))
        if output.json { return try output.printJSON(MixDocument(path: path)) }
        if path.isEmpty { output.line("no path: both tracks must be analysed (run shelf analyze)") }
        for step in path { output.line(SonicLines.line(step)) }
    }
}

/// The text form of a match: "0.93  42  Artist – Title  (tempo 126 vs 128 BPM; same key (A minor))".
enum SonicLines {
    static func line(_ match: SonicMatchDocument) -> String {
        let why = match.why.isEmpty ? "" : "  (\(match.why.joined(separator: "; ")))"
        return String(format: "%.3f", match.similarity) + "  \(match.track.id)  \(match.track.artist ?? "") – \(match.track.title ?? "")\(why)"
    }
}
