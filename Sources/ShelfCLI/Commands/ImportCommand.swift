import Foundation
import Shelf
import ShelfCore

/// `shelf import PATH…`: reads audio files into the library with a progress bar; Ctrl-C stops
/// between chunks (what is committed stays; running it again carries on).
struct ImportCommand: Command {
    static let name = "import"
    static let abstract = "Import audio files (tags, sort tags, lyrics, pictures); unchanged files are skipped, moves and duplicates recognised by audio."
    static let synopsis =
        "PATH... [--into LIBRARY] [--chunk N] [--duplicates] [--separators LIST] [--genre-separators LIST] [--pictures embedded|files] [--lyrics embedded|files] [--json]"

    let paths: [URL]
    let options: ImportOptions
    /// Settings given on this command line: applied to the library's and kept for later imports.
    let nameSeparators: [String]?
    let genreSeparators: [String]?
    let pictures: SidecarOrder?
    let lyrics: SidecarOrder?
    /// `--into`: the library whose roots the folders become (the first library when not given).
    let into: String?

    init(arguments: inout Arguments) throws {
        var options = ImportOptions()
        into = try arguments.option("--into")
        options.chunkSize = try arguments.intOption("--chunk", in: 1...100_000) ?? options.chunkSize
        options.importDuplicates = arguments.flag("--duplicates")
        // Separators are given as one string, each between | (so that ';' and ' / ' can be named).
        func separators(_ text: String) -> [String] { text.components(separatedBy: "|").filter { !$0.isEmpty } }
        nameSeparators = try arguments.option("--separators").map(separators)
        genreSeparators = try arguments.option("--genre-separators").map(separators)
        func order(_ flag: String) throws -> SidecarOrder? {
            guard let word = try arguments.option(flag) else { return nil }
            guard let order = SidecarOrder(rawValue: word) else { throw UsageError("\(flag) expects embedded or files, not '\(word)'") }
            return order
        }
        pictures = try order("--pictures")
        lyrics = try order("--lyrics")
        let words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("import expects at least one file or directory") }
        paths = words.map { URL(fileURLWithPath: $0) }
        self.options = options
    }

    func run(library: Library, output: Output) async throws {
        var settings = try await library.importSettings()
        let saved = settings
        if let nameSeparators { settings.nameSeparators = nameSeparators }
        if let genreSeparators { settings.genreSeparators = genreSeparators }
        if let pictures { settings.pictures = pictures }
        if let lyrics { settings.lyrics = lyrics }
        if settings != saved { try await library.setImportSettings(settings) }
        var options = options
        options.settings = settings
        if let into { options.library = try await library.musicLibrary(named: into).id }
        let report = try await runInterruptible(
            label: "importing", cancelledMessage: "import stopped between chunks; what was imported stays, run it again to carry on"
        ) { [paths, options] report in
            try await library.importFiles(at: paths, options: options) { progress in report(progress.done, progress.total) }
        }
        do {
            try await completeMirror(library)
        } catch {
            // The import itself is done and reported; only the mirror waits for its next build.
            let reason = (error as? CommandFailure)?.message ?? "the read mirror could not be built (\(error)); `shelf mirror build` tries again"
            Output.log("shelf: \(reason)")
        }
        if output.json { return try output.printJSON(report) }
        output.line(
            "added \(report.added), updated \(report.updated), unchanged \(report.unchanged), moved \(report.moved) in \(String(format: "%.1f", report.seconds)) s"
        )
        if report.playlists > 0 { output.line("playlists from playlist files: \(report.playlists)") }
        for duplicate in report.duplicates { output.line("duplicate: \(duplicate.path) (same audio as \(duplicate.existing))") }
        for failure in report.failed { output.line("failed: \(failure.error)") }
        for warning in report.warnings { output.line("warning: \(warning.error)") }
    }
}

/// `shelf scan [--prune]`: judges the music roots, marks the tracks whose files are gone as
/// missing (those of offline roots excepted), and with --prune removes the missing ones.
struct ScanCommand: Command {
    static let name = "scan"
    static let abstract = "Mark tracks whose files are gone as missing (offline roots spared); --prune removes them."
    static let synopsis = "[--prune] [--json]"

    let prune: Bool

    init(arguments: inout Arguments) throws {
        prune = arguments.flag("--prune")
        guard try arguments.positionals().isEmpty else { throw UsageError("scan takes no arguments") }
    }

    func run(library: Library, output: Output) async throws {
        let report = try await library.scanMissing(prune: prune)
        if output.json { return try output.printJSON(report) }
        for root in report.roots where !root.online {
            output.line("offline: \(root.path) (\(root.reason ?? "not there")): its \(root.tracks) track\(root.tracks == 1 ? "" : "s") kept as they are")
        }
        for item in report.missing { output.line("missing: \(item.id) \(item.path)") }
        if report.returned > 0 { output.line("back: \(report.returned) track\(report.returned == 1 ? "" : "s") whose files returned") }
        let count = report.missing.count
        output.line("\(count) track\(count == 1 ? "" : "s") with no file (\(report.newlyMissing) new)\(prune ? ", \(report.pruned) removed" : "")")
    }
}

extension ImportCommand {
    static let discussion = """
        Reads audio files and directories (recursively) through TagLib, or ffprobe for what TagLib cannot \
        decode: tags, sort tags, lyrics, pictures and audio properties. Unchanged files are skipped; a file \
        recognised by its audio hash is a move or a duplicate rather than a new track. Work is committed in \
        chunks with a progress bar, and Ctrl-C stops between chunks; the read mirror is brought up to date last. \
        The separators and the order of pictures and lyrics are the library's settings: given here, they are \
        kept for every later import and for the server's scans (the report's `settings` shows them).
        """
    static let flags = [
        FlagHelp("--into", "LIBRARY", "The library (from `shelf library list`) whose music roots the folders become.", default: "the first library"),
        FlagHelp("--chunk", "N", "Files per transaction (1 to 100000).", default: "500"),
        FlagHelp("--duplicates", nil, "Import files whose audio is already in the library as tracks of their own, instead of reporting them."),
        FlagHelp(
            "--separators", "LIST",
            "Where a single artist, album-artist, composer or role tag splits into names, separated by | (empty: never); kept by the library.",
            default: "; | / | feat. | ft. | featuring "),
        FlagHelp("--genre-separators", "LIST", "Where a single genre, mood or release-type tag splits, separated by |; kept by the library.", default: ";|/|,"),
        FlagHelp(
            "--pictures", "ORDER", "embedded: a file's own picture before its folder's cover.* (and the like); files: the folder's first. Kept by the library.",
            default: "embedded"),
        FlagHelp(
            "--lyrics", "ORDER", "embedded: a file's own lyrics before NAME.lrc or NAME.txt beside it; files: the files first. Kept by the library.",
            default: "embedded"),
    ]
    static let examples = [
        "shelf import ~/Music", "shelf import album1 album2/track.flac --json", "shelf import /srv/music --chunk 2000",
        "shelf import /srv/audiobooks --into Audiobooks",
    ]
    static var words: ValueKind { .file }
}

extension ScanCommand {
    static let discussion = """
        Judges each music root the library remembers (from imports and `serve --music`): a root that is gone, \
        empty where it held tracks, or on another file system without its files is offline, and its tracks are \
        left exactly as they are. Elsewhere a track whose file is gone is marked missing: hidden from lists, \
        kept with its ID, statistics, stars and playlist places, and back as it was when its audio reappears \
        (`shelf tracks --filter missing:yes` lists them). With --prune, missing tracks are removed for good, in \
        one transaction, and the removal is logged for syncing clients.
        """
    static let flags = [FlagHelp("--prune", nil, "Remove the missing tracks (never those of offline roots).")]
    static let examples = ["shelf scan", "shelf scan --prune --json"]
}
