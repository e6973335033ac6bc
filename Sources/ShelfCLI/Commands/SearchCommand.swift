import Foundation
import Shelf
import ShelfCore

/// `shelf search`: tracks whose title, artist, album, album artist, composer, genre or sort tags
/// hold every typed word, best first, one page at a time.
struct SearchCommand: Command {
    static let name = "search"
    static let readsMirror = true
    static let abstract =
        "Search titles, artists, albums, composers, genres and sort-tag readings (accents, width and kana folded; the last word is a prefix), best first."
    static let synopsis = "TEXT... [--filter EXPR] [--playlist ID] [--after CURSOR] [--limit N] [--json]"

    let text: String
    let scope: SearchScope
    let after: PageCursor?
    let limit: Int

    init(arguments: inout Arguments) throws {
        let filter = try ListOptions.parseFilter(try arguments.option("--filter") ?? "")
        let playlist = try arguments.intOption("--playlist", in: 1...Int(Int64.max)).map { PlaylistID(Int64($0)) }
        scope = SearchScope(filter: filter, playlist: playlist)
        limit = try arguments.intOption("--limit", in: 0...100_000) ?? 50
        after = try ListOptions.parseCursor(&arguments)
        text = try arguments.positionals().joined(separator: " ")
        guard !SearchQuery(text).isEmpty else { throw UsageError("search: give the words to search for (letters or digits)") }
    }

    func run(library: Library, output: Output) async throws {
        let page = try await library.search(text, scope: scope, after: after, limit: limit)
        try await TracksCommand.print(page, library: library, output: output, suffix: " matching '\(text)'")
    }
}

extension SearchCommand {
    static let discussion = """
        Full-text search over titles, artists, albums, album artists, composers, genres and the kana readings \
        in sort tags, best match first. Matching folds case, accents, width and kana; the last word is a \
        prefix ("beat" finds "The Beatles"); Japanese and Chinese text is matched inside words.
        """
    static let flags = [
        FlagHelp("--filter", "EXPR", "Only results that also match EXPR (the `tracks --filter` language).", default: "every track"),
        FlagHelp("--playlist", "ID", "Only tracks in that playlist.", default: "the whole library"),
        ListOptions.afterFlag, ListOptions.limitFlag,
    ]
    static let examples = ["shelf search beatles yellow", "shelf search 宇多 --limit 5", "shelf search live --filter 'year:1970..1979' --json"]
}
