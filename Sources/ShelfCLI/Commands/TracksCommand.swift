import Foundation
import Shelf
import ShelfCore

/// `shelf tracks`: one page of the library in a chosen order.
struct TracksCommand: Command {
    static let name = "tracks"
    static let abstract = "List a page of tracks: --sort FIELD[:desc] (e.g. albumArtist, year:desc), --limit, --offset."
    static let synopsis = "[--sort FIELD[:desc]] [--sort-tags on|off] [--limit N] [--offset N] [--json]"

    let query: LibraryQuery
    let limit: Int
    let offset: Int

    init(arguments: inout Arguments) throws {
        query = try Self.parseSort(try arguments.option("--sort") ?? "artist", sortTags: try arguments.option("--sort-tags"))
        limit = try arguments.intOption("--limit", in: 0...100_000) ?? 50
        offset = try arguments.intOption("--offset", in: 0...Int(Int32.max)) ?? 0
    }

    /// Parses `FIELD[:asc|:desc]` and `on|off`.
    static func parseSort(_ text: String, sortTags: String?) throws -> LibraryQuery {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let fieldName = parts.first, let field = SortField(rawValue: fieldName) else {
            throw UsageError(
                "unknown sort field '\(text)'; one of: \(SortField.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var descending = false
        if parts.count == 2 {
            switch parts[1] {
            case "desc": descending = true
            case "asc": descending = false
            default: throw UsageError("sort direction must be asc or desc, got '\(parts[1])'")
            }
        }
        var useSortTags = true
        switch sortTags {
        case nil, "on": useSortTags = true
        case "off": useSortTags = false
        case let other?: throw UsageError("--sort-tags expects on or off, got '\(other)'")
        }
        return LibraryQuery(sort: field, descending: descending, useSortTags: useSortTags)
    }

    func run(library: Library, output: Output) async throws {
        let page = try await library.page(query, offset: offset, limit: limit)
        if output.json { return try output.printJSON(page) }
        output.line(
            "\(Format.column("ID", 8)) \(Format.column("Artist", 24)) \(Format.column("Album", 24)) "
                + "\(Format.column("#", 5)) \(Format.column("Title", 32)) Time")
        for track in page.items {
            let number = track.trackNumber.map { n in track.discNumber.map { "\($0)-\(n)" } ?? "\(n)" }
            output.line(
                "\(Format.column(track.id.description, 8)) \(Format.column(track.artist, 24)) "
                    + "\(Format.column(track.album, 24)) \(Format.column(number, 5)) "
                    + "\(Format.column(track.title, 32)) \(Format.duration(track.duration))")
        }
        output.line("(\(page.items.count) of \(page.total) tracks, from \(offset))")
    }
}
