import Foundation
import Shelf
import ShelfCore

/// `shelf loudness [--filter EXPR] [--write-tags]`: measures EBU R128 loudness and true peak per
/// track and per album and stores them as ReplayGain; Ctrl-C stops between albums.
struct LoudnessCommand: Command {
    static let name = "loudness"
    static let abstract = "Measure EBU R128 loudness and true peak (per track and album) and store them as ReplayGain."
    static let synopsis = "[--filter EXPR] [--write-tags] [--json]"
    static let discussion = """
        Decodes each track with ffmpeg and measures its integrated loudness (EBU R128, through libebur128) and \
        true peak, and each album's from all its tracks' audio together (not the mean of its tracks): a \
        selected track is measured with every other track of its album, so an album's tracks always carry \
        one album gain and peak. The figures are stored as ReplayGain 2.0 gains against −18 LUFS on the \
        tracks whose tags carry none, so that every player and the Subsonic API level them. By default the \
        tracks without any ReplayGain are measured; --filter picks others. --write-tags also writes \
        REPLAYGAIN_TRACK_GAIN/PEAK and REPLAYGAIN_ALBUM_GAIN/PEAK (R128_TRACK_GAIN and R128_ALBUM_GAIN for \
        Opus) into the files whose tags differ, each rewritten atomically, as rsgain does; without --filter \
        it covers every track, writing what is measured already without decoding it again. One album per \
        transaction: Ctrl-C stops between albums and a second run carries on with what is left.
        """
    static let flags = [
        FlagHelp("--filter", "EXPR", "Which tracks to measure (the filter language of shelf tracks).", default: "replayGain:no; every track with --write-tags"),
        FlagHelp("--write-tags", nil, "Also write the gains into the files' tags (atomically)."),
    ]
    static let examples = ["shelf loudness", "shelf loudness --filter 'album:\"Kind of Blue\"' --write-tags", "shelf loudness --json"]

    let options: LoudnessOptions

    init(arguments: inout Arguments) throws {
        var options = LoudnessOptions()
        if let text = try arguments.option("--filter") {
            do { options.filter = try FilterParser.parse(text) } catch { throw UsageError("--filter: \(error)") }
        }
        options.writeTags = arguments.flag("--write-tags")
        guard try arguments.positionals().isEmpty else { throw UsageError("loudness takes no words (use --filter)") }
        self.options = options
    }

    func run(library: Library, output: Output) async throws {
        let report = try await runInterruptible(
            label: "measuring", cancelledMessage: "loudness stopped between albums; what was measured stays, run it again to carry on"
        ) { [options] report in
            try await library.measureLoudness(options) { done, total in report(done, total) }
        }
        if output.json { return try output.printJSON(report) }
        for item in report.measured {
            let loudness = item.integrated.map { String(format: "%.1f LUFS", $0) } ?? "silence"
            let peak = String(format: "%.1f dBTP", 20 * log10(max(item.truePeak, 1e-9)))
            let gains = [item.trackGain.map { String(format: "track %+.2f dB", $0) }, item.albumGain.map { String(format: "album %+.2f dB", $0) }]
                .compactMap { $0 }.joined(separator: ", ")
            output.line("\(item.id): \(loudness), \(peak)\(gains.isEmpty ? "" : "; \(gains)")\(item.stored ? "" : " (tags kept)")")
        }
        for failure in report.failed { output.line("failed: \(failure.error)") }
        let rate = report.seconds > 0 ? report.audioSeconds / report.seconds : 0
        output.line(
            "\(report.measured.count) track\(report.measured.count == 1 ? "" : "s") in \(report.albums) album\(report.albums == 1 ? "" : "s") measured"
                + (report.written > 0 ? ", \(report.written) files tagged" : "")
                + String(format: " in %.1f s (%.0f× real time)", report.seconds, rate))
    }
}
