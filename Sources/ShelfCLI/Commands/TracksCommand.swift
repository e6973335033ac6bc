import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// The list options shared by `tracks`, `sections` and `snapshot`: sort, sort tags, filter.
struct ListOptions {
    let query: LibraryQuery

    init(arguments: inout Arguments) throws {
        let sort = try arguments.option("--sort") ?? "artist"
        let sortTags = try arguments.option("--sort-tags")
        let filter = try Self.parseFilter(try arguments.option("--filter") ?? "")
        query = try Self.parseSort(sort, sortTags: sortTags, filter: filter)
    }

    /// Parses `--filter`'s language; a mistake is a usage error naming its position.
    static func parseFilter(_ text: String) throws -> Filter {
        do { return try Parameters.filter(text) } catch { throw UsageError("--\(error.message)") }
    }

    /// Reads `--after CURSOR`, a cursor printed with an earlier page.
    static func parseCursor(_ arguments: inout Arguments) throws -> PageCursor? {
        guard let text = try arguments.option("--after") else { return nil }
        do { return try Parameters.cursor(text) } catch { throw UsageError("--\(error.message)") }
    }

    /// Parses `FIELD[:asc|:desc]` and `on|off`.
    static func parseSort(_ text: String, sortTags: String?, filter: Filter) throws -> LibraryQuery {
        do { return try Parameters.query(sort: text, sortTags: sortTags, filter: filter) } catch { throw UsageError("--\(error.message)") }
    }
}

/// `shelf tracks`: one page of the library in a chosen order, by cursor or offset.
struct TracksCommand: Command {
    static let name = "tracks"
    static let readsMirror = true
    static let abstract =
        "List a page of tracks in order (--sort albumArtist, year:desc), filtered (--filter 'artist:beatles year:1965..1970'), by --after CURSOR or --offset."
    static let synopsis = "[--sort FIELD[:desc]] [--sort-tags on|off] [--filter EXPR] [--after CURSOR | --offset N] [--limit N] [--album ID] [--json]"

    let list: ListOptions
    /// `--album ID`: that album's tracks in disc and track order (the drill-down from `albums`).
    let album: GroupID?
    let limit: Int
    let offset: Int?
    let after: PageCursor?

    init(arguments: inout Arguments) throws {
        list = try ListOptions(arguments: &arguments)
        limit = try arguments.intOption("--limit", in: 0...100_000) ?? 50
        offset = try arguments.intOption("--offset", in: 0...Int(Int32.max))
        after = try ListOptions.parseCursor(&arguments)
        if offset != nil && after != nil { throw UsageError("--after and --offset cannot be combined") }
        album = try arguments.option("--album").map { text in
            guard let id = Int64(text), id > 0 else { throw UsageError("--album expects an album ID from `shelf albums`, got '\(text)'") }
            return GroupID(id)
        }
    }

    func run(library: Library, output: Output) async throws {
        if let album {
            let items = try await library.albumTracks(album)
            let page = ListPage(items: items, nextCursor: nil, total: items.count)
            return try await Self.print(page, library: library, output: output, suffix: " on album \(album)")
        }
        let page =
            if let offset {
                try await library.list(list.query, offset: offset, limit: limit)
            } else {
                try await library.list(list.query, after: after, limit: limit)
            }
        try await Self.print(page, library: library, output: output, suffix: offset.map { ", from \($0)" } ?? "")
    }

    /// Prints a page of tracks as a table, or as `Result` JSON: the shape `tracks` and `search` share.
    static func print(_ page: ListPage, library: Library, output: Output, suffix: String = "") async throws {
        let document = try await Documents.tracks(page, library)
        if output.json { return try output.printJSON(document) }
        let listed = document.items
        output.line(
            "\(Format.column("ID", 8)) \(Format.column("§", 2)) \(Format.column("Artist", 24)) \(Format.column("Album", 24)) "
                + "\(Format.column("#", 5)) \(Format.column("Title", 32)) Time")
        for entry in listed {
            let track = entry.track
            let number = track.trackNumber.map { n in track.discNumber.map { "\($0)-\(n)" } ?? "\(n)" }
            output.line(
                "\(Format.column(track.id.description, 8)) \(Format.column(entry.section, 2)) \(Format.column(track.artist, 24)) "
                    + "\(Format.column(track.album, 24)) \(Format.column(number, 5)) "
                    + "\(Format.column(track.title, 32)) \(Format.duration(track.duration))")
        }
        output.line("(\(page.items.count) of \(page.total) tracks\(suffix))")
        if let next = page.nextCursor { output.line("next page: --after \(next)") }
    }
}

/// `shelf sections`: the A–Z / kana / # sections of a list with where each starts.
struct SectionsCommand: Command {
    static let name = "sections"
    static let readsMirror = true
    static let abstract = "List the sections (A–Z, kana rows, #) of a sorted, filtered list: name, first index, count."
    static let synopsis = "[--sort FIELD[:desc]] [--sort-tags on|off] [--filter EXPR] [--json]"

    let list: ListOptions

    init(arguments: inout Arguments) throws { list = try ListOptions(arguments: &arguments) }

    func run(library: Library, output: Output) async throws {
        let sections = try await library.sections(list.query)
        if output.json { return try output.printJSON(SectionsDocument(sections: sections)) }
        for section in sections { output.line("\(Format.column(section.name, 3)) from \(section.firstIndex), \(section.count) tracks") }
    }
}

/// `shelf snapshot`: every track ID of a list in order.
struct SnapshotCommand: Command {
    static let name = "snapshot"
    static let readsMirror = true
    static let abstract = "Print every track ID of a sorted, filtered list in order (one per line, or {\"ids\":[…]})."
    static let synopsis = "[--sort FIELD[:desc]] [--sort-tags on|off] [--filter EXPR] [--json]"

    let list: ListOptions

    init(arguments: inout Arguments) throws { list = try ListOptions(arguments: &arguments) }

    func run(library: Library, output: Output) async throws {
        let ids = try await library.snapshot(list.query)
        if output.json { return try output.printJSON(SnapshotDocument(ids: ids)) }
        var text = ""
        text.reserveCapacity(ids.count * 7)
        for id in ids { text += "\(id.rawValue)\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// `shelf mirror`: the read mirror's status and settings.
struct MirrorCommand: Command {
    static let name = "mirror"
    static let abstract = "status | build (with a progress bar) | enable | disable | purge the read mirror."
    static let synopsis = "status | build [--fresh] [--chunk N] | enable | disable | purge [--json]"

    let action: String
    let fresh: Bool
    let chunk: Int?

    init(arguments: inout Arguments) throws {
        fresh = arguments.flag("--fresh")
        chunk = try arguments.intOption("--chunk", in: 1...1_000_000)
        let words = try arguments.positionals()
        guard words.count == 1, ["status", "build", "enable", "disable", "purge"].contains(words[0]) else {
            throw UsageError("mirror expects one of: status, build, enable, disable, purge")
        }
        action = words[0]
        if (fresh || chunk != nil) && action != "build" { throw UsageError("--fresh and --chunk go with `mirror build`") }
    }

    func configure(_ configuration: inout Library.Configuration) {
        if let chunk { configuration.mirrorChunkSize = chunk }
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case "build":
            // Resumes what the file holds; --fresh starts again from nothing.
            try await completeMirror(library, enable: true, fresh: fresh)
        case "enable":
            try await completeMirror(library, enable: true)
        case "disable": try await library.disableMirror()
        case "purge": try await library.purgeMirror()
        default: break
        }
        let status = try await library.mirrorStatus()
        if output.json { return try output.printJSON(status) }
        output.line("state:       \(status.state.rawValue)")
        if status.state == .building {
            output.line("phase:       \(status.phase?.rawValue ?? "rows") \(status.phaseDone)/\(status.phaseTotal)")
            output.line("progress:    \(status.builtTracks)/\(status.totalTracks) tracks copied")
            if !status.buildRunning { output.line("             resumes with `shelf mirror build`") }
        }
        output.line("applied seq: \(status.appliedSeq)")
        output.line("on disk:     \(status.bytesOnDisk) (\(Format.bytes(status.bytesOnDisk)))")
    }
}

extension ListOptions {
    /// The help of the flags every list command shares.
    static let flags: [FlagHelp] = [
        FlagHelp(
            "--sort", "FIELD[:desc]", "The order, by any track field; ties are broken by a fixed chain (artist: album, disc, track, title).",
            default: "artist", completes: .sortFields),
        FlagHelp(
            "--sort-tags", "on|off", "Whether artist, album, album artist, composer and title sort by their sort tags when present.",
            default: "on", completes: .choices(["on", "off"])),
        FlagHelp(
            "--filter", "EXPR",
            "Only tracks matching EXPR: `artist:beatles year:1965..1970 genre:=Rock -genre:Pop rating:>=80`; a bare word matches any text field.",
            default: "every track"),
    ]
    /// `--after CURSOR`.
    static let afterFlag = FlagHelp("--after", "CURSOR", "Start after the cursor an earlier page printed (its `nextCursor`).", default: "the first page")
    /// `--limit N` for pages.
    static let limitFlag = FlagHelp("--limit", "N", "The most items on the page (0 to 100000).", default: "50")
}

extension TracksCommand {
    static let discussion = """
        Prints one page of the library's tracks in the order of --sort, with each track's section (A–Z, kana \
        row, #). Pages are read by keyset cursor: --after with the previous page's nextCursor reads the next one \
        in constant time at any depth; --offset N jumps to a position instead. --album lists one album's tracks \
        in disc and track order. Answered from the read mirror when it is built.
        """
    static let flags =
        ListOptions.flags + [
            ListOptions.afterFlag,
            FlagHelp("--offset", "N", "Start at position N (from 0) instead of after a cursor; cannot be combined with --after.", default: "0"),
            ListOptions.limitFlag,
            FlagHelp("--album", "ID", "Only that album's tracks (an ID from `shelf albums`), in disc and track order."),
        ]
    static let examples = [
        "shelf tracks --sort year:desc --limit 20",
        "shelf tracks --filter 'artist:beatles year:1965..1970' --sort album",
        "shelf tracks --after shelfc1.… --json",
    ]
}

extension SectionsCommand {
    static let discussion = """
        Prints the sections of a sorted, filtered list, as an index bar shows them: A to Z, the kana rows あ to \
        わ, and # for the rest, each with the position of its first track and its count, so that a client can \
        jump to a letter with `tracks --offset`.
        """
    static let flags = ListOptions.flags
    static let examples = ["shelf sections --sort artist", "shelf sections --sort album --filter 'genre:=Jazz' --json"]
}

extension SnapshotCommand {
    static let discussion = """
        Prints every track ID of a sorted, filtered list in order, one per line (or {"ids":[…]} with --json): \
        a whole list at once, for a client that keeps its own copy or a script that pipes IDs on.
        """
    static let flags = ListOptions.flags
    static let examples = ["shelf snapshot --sort title", "shelf snapshot --filter 'rating:>=80' | xargs shelf delete"]
}

extension MirrorCommand {
    static let discussion = """
        The read mirror (mirror.sqlite) answers pages, sections, search and views from precomputed keys. It is \
        on by default and rebuilt when deleted. status reads its state, phase and progress; build builds it \
        with a progress bar, resuming a stopped build from its last finished step (--fresh starts over); \
        enable, disable and purge turn it on, off, or off and delete it.
        """
    static let flags = [
        FlagHelp("--fresh", nil, "With build: start again from nothing instead of resuming."),
        FlagHelp("--chunk", "N", "With build: tracks copied per step (1 to 1000000).", default: "the engine's chunk size"),
    ]
    static let examples = ["shelf mirror status", "shelf mirror build", "shelf mirror build --fresh --json"]
    static var words: ValueKind { .choices(["status", "build", "enable", "disable", "purge"]) }
}
