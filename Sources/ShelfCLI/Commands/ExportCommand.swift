import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf export`: copies or converts tracks into a directory (ffmpeg for conversion), tags them
/// from the library and registers them as new tracks.
struct ExportCommand: Command {
    static let name = "export"
    static let abstract =
        "Export tracks (IDs or --filter) to a directory as copy, flac, wav, mp3, m4a or opus, tagged from the library and registered; names from --template."
    static let synopsis =
        "(ID… | --filter EXPR) --to DIR --format copy|flac|wav|mp3|m4a|opus [--bitrate K] [--sample-rate HZ] [--channels N] [--template T] [--overwrite] [--json]"

    let ids: [TrackID]
    let filter: Filter?
    let directory: URL
    let options: ExportOptions

    init(arguments: inout Arguments) throws {
        let filterText = try arguments.option("--filter")
        guard let to = try arguments.option("--to") else { throw UsageError("export needs --to DIR") }
        let formatText = try arguments.option("--format") ?? "copy"
        guard let format = ExportFormat(rawValue: formatText) else {
            throw UsageError("--format expects one of \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")), got '\(formatText)'")
        }
        let bitrate = try arguments.intOption("--bitrate", in: 8...640)
        let sampleRate = try arguments.intOption("--sample-rate", in: 8_000...192_000)
        let channels = try arguments.intOption("--channels", in: 1...8)
        let template = try arguments.option("--template") ?? ExportOptions.defaultTemplate
        let overwrite = arguments.flag("--overwrite")
        options = ExportOptions(format: format, bitrate: bitrate, sampleRate: sampleRate, channels: channels, template: template, overwrite: overwrite)
        directory = URL(fileURLWithPath: to)
        filter = try filterText.map(ListOptions.parseFilter)
        ids = try arguments.positionals().map { word in
            guard let id = Int64(word), id > 0 else { throw UsageError("'\(word)' is not a track ID") }
            return TrackID(id)
        }
        if ids.isEmpty == (filter == nil) { throw UsageError("export expects track IDs or --filter EXPR (one of them)") }
    }

    func run(library: Library, output: Output) async throws {
        var chosen = ids
        if let filter { chosen = try await library.snapshot(LibraryQuery(sort: .albumArtist, filter: filter)) }
        let (ids, directory, options) = (chosen, directory, options)
        let result = try await runInterruptible(label: "exporting", cancelledMessage: "export cancelled; no partial file was left") { report in
            try await library.export(ids, to: directory, options: options, progress: report)
        }
        if output.json {
            try output.printJSON(ExportDocument(result))
        } else {
            output.line("exported \(result.exported.count), skipped \(result.skipped.count), failed \(result.failed.count)")
            for item in result.exported { output.line("  \(item.source) → \(item.path)" + (item.track.map { " (track \($0))" } ?? "")) }
        }
        EditCommand.finish(skipped: result.skipped, failed: result.failed, of: ids.count, output: output, what: "exported")
    }
}

extension ExportCommand {
    static let discussion = """
        Copies the tracks (by ID, or every track matching --filter) into a directory, or converts them through \
        ffmpeg, then writes the library's tags into the new files and registers them as tracks. File names come \
        from --template; an existing file is skipped unless --overwrite.
        """
    static let flags = [
        FlagHelp("--filter", "EXPR", "Export every track matching EXPR instead of IDs."),
        FlagHelp("--to", "DIR", "The directory to write into (created if needed); required.", completes: .directory),
        FlagHelp(
            "--format", "FORMAT", "copy (the file as it is) or a format to convert to.", default: "copy",
            completes: .choices(ExportFormat.allCases.map(\.rawValue))),
        FlagHelp("--bitrate", "K", "The bit rate of lossy formats, 8 to 640 kbit/s.", default: "ffmpeg's for the format"),
        FlagHelp("--sample-rate", "HZ", "Resample to HZ (8000 to 192000; Opus takes 8000, 12000, 16000, 24000 or 48000).", default: "the source's"),
        FlagHelp("--channels", "N", "Mix to N channels (1 to 8).", default: "the source's"),
        FlagHelp(
            "--template", "T", "The path of each file under --to, from {albumArtist}, {album}, {disc}, {track}, {title}, {ext} and other fields.",
            default: ExportOptions.defaultTemplate),
        FlagHelp("--overwrite", nil, "Replace files that exist instead of skipping them."),
    ]
    static let examples = [
        "shelf export 1 2 3 --to out --format mp3 --bitrate 192",
        "shelf export --filter 'genre:=Jazz' --to /mnt/phone --format opus --bitrate 96",
        "shelf export 7 --to backup --template '{artist} - {title}.{ext}' --json",
    ]
}
