import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf albums|artists|composers|genres`: one page of an aggregation view, by name or sort name.
protocol GroupsCommand: Command {
    static var kind: GroupKind { get }
    var options: GroupsCommandOptions { get }
    init(options: GroupsCommandOptions)
}

extension GroupsCommand {
    static var readsMirror: Bool { true }
}

/// The options every view command shares.
struct GroupsCommandOptions: Sendable {
    let query: GroupQuery
    let after: PageCursor?
    let limit: Int

    init(kind: GroupKind, arguments: inout Arguments) throws {
        let by = kind == .artist ? try arguments.option("--by") : nil
        let artist = kind == .album ? try arguments.option("--artist") : nil
        let sort = try arguments.option("--sort")
        let sortTags = try arguments.option("--sort-tags")
        do {
            query = try Parameters.groupQuery(kind: kind, by: by, sort: sort, sortTags: sortTags, artist: artist)
        } catch {
            throw UsageError("--\(error.message)")
        }
        after = try ListOptions.parseCursor(&arguments)
        limit = try arguments.intOption("--limit", in: 0...100_000) ?? 50
    }
}

extension GroupsCommand {
    static var synopsis: String {
        "[--sort name[:desc]] [--sort-tags on|off]" + (kind == .album ? " [--artist ID]" : "") + (kind == .artist ? " [--by artist|albumArtist]" : "")
            + " [--after CURSOR] [--limit N] [--json]"
    }

    init(arguments: inout Arguments) throws { self.init(options: try GroupsCommandOptions(kind: Self.kind, arguments: &arguments)) }

    func run(library: Library, output: Output) async throws {
        let page = try await library.groups(options.query, after: options.after, limit: options.limit)
        if output.json {
            return try output.printJSON(Documents.groups(page))
        }
        let showsArtist = options.query.kind == .album
        output.line("\(Format.column("ID", 20)) \(Format.column("§", 2)) \(Format.column("Name", 36)) "
            + (showsArtist ? "\(Format.column("Artist", 24)) " : "") + "Tracks Albums")
        for item in page.items {
            output.line("\(Format.column(item.id.description, 20)) \(Format.column(item.section, 2)) \(Format.column(item.name, 36)) "
                + (showsArtist ? "\(Format.column(item.artist, 24)) " : "") + "\(Format.column(String(item.trackCount), 6)) \(item.albumCount)")
        }
        output.line("(\(page.items.count) of \(page.total) \(Self.name))")
        if let next = page.nextCursor { output.line("next page: --after \(next)") }
    }
}

/// `shelf albums`: albums by name; `--artist ID` drills down from an artist.
struct AlbumsCommand: GroupsCommand {
    static let name = "albums"
    static let abstract = "List albums (grouped by album artist, \"Various Artists\" for compilations) by name; --artist ID lists one artist's."
    static let kind = GroupKind.album
    let options: GroupsCommandOptions
}

/// `shelf artists`: artists (or album artists with `--by albumArtist`) by name.
struct ArtistsCommand: GroupsCommand {
    static let name = "artists"
    static let abstract = "List artists (--by albumArtist: album artists) by name or sort name, with album and track counts."
    static let kind = GroupKind.artist
    let options: GroupsCommandOptions
}

/// `shelf composers`: composers by name.
struct ComposersCommand: GroupsCommand {
    static let name = "composers"
    static let abstract = "List composers by name or sort name, with album and track counts."
    static let kind = GroupKind.composer
    let options: GroupsCommandOptions
}

/// `shelf genres`: genres by name.
struct GenresCommand: GroupsCommand {
    static let name = "genres"
    static let abstract = "List genres by name, with album and track counts."
    static let kind = GroupKind.genre
    let options: GroupsCommandOptions
}
