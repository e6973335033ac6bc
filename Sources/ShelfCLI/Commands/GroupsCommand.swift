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
    /// `shelf artists --role ROLE`: the people credited in a role instead of the view.
    let role: String?

    init(kind: GroupKind, arguments: inout Arguments) throws {
        let by = kind == .artist ? try arguments.option("--by") : nil
        role = kind == .artist ? try arguments.option("--role") : nil
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
        if role != nil, by != nil || after != nil { throw UsageError("--role lists everyone credited in the role; it takes neither --by nor --after") }
    }
}

extension GroupsCommand {
    static var synopsis: String {
        "[--sort name[:desc]] [--sort-tags on|off]" + (kind == .album ? " [--artist ID]" : "")
            + (kind == .artist ? " [--by artist|albumArtist | --role ROLE]" : "")
            + " [--after CURSOR] [--limit N] [--json]"
    }

    init(arguments: inout Arguments) throws { self.init(options: try GroupsCommandOptions(kind: Self.kind, arguments: &arguments)) }

    func run(library: Library, output: Output) async throws {
        let page: GroupPage
        if let role = options.role {
            let credited = try await library.credits(role: role)
            page = GroupPage(items: Array(credited.prefix(options.limit)), nextCursor: nil, total: credited.count)
        } else {
            page = try await library.groups(options.query, after: options.after, limit: options.limit)
        }
        if output.json {
            return try output.printJSON(Documents.groups(page))
        }
        let showsArtist = options.query.kind == .album
        output.line(
            "\(Format.column("ID", 20)) \(Format.column("§", 2)) \(Format.column("Name", 36)) "
                + (showsArtist ? "\(Format.column("Artist", 24)) " : "") + "Tracks Albums")
        for item in page.items {
            output.line(
                "\(Format.column(item.id.description, 20)) \(Format.column(item.section, 2)) \(Format.column(item.name, 36)) "
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

extension GroupsCommand {
    static var flags: [FlagHelp] {
        var flags = [
            FlagHelp("--sort", "name[:desc]", "By name, A to Z or (:desc) Z to A.", default: "name", completes: .choices(["name", "name:desc"])),
            FlagHelp("--sort-tags", "on|off", "Whether names sort by their sort tags when present.", default: "on", completes: .choices(["on", "off"])),
        ]
        if kind == .album { flags.append(FlagHelp("--artist", "ID", "Only that artist's albums (an ID from `shelf artists`).", default: "every album")) }
        if kind == .artist {
            flags.append(
                FlagHelp(
                    "--by", "artist|albumArtist", "Group by track artist or by album artist.", default: "artist",
                    completes: .choices(["artist", "albumArtist"])))
            flags.append(
                FlagHelp(
                    "--role", "ROLE", "Instead, the people credited in a role (from the tags' roles and performers), with their track and album counts.",
                    completes: .choices(["lyricist", "conductor", "remixer", "producer", "engineer", "mixer", "djmixer", "arranger", "performer"])))
        }
        return flags + [ListOptions.afterFlag, ListOptions.limitFlag]
    }
}

extension AlbumsCommand {
    static let discussion = """
        One page of the album view: albums grouped by album artist (compilations under "Various Artists"), with \
        their track counts and sections, by keyset cursor like `shelf tracks`. `shelf tracks --album ID` lists \
        an album's tracks.
        """
    static let examples = ["shelf albums --limit 20", "shelf albums --artist 17 --json", "shelf albums --sort name:desc --sort-tags off"]
}

extension ArtistsCommand {
    static let discussion = """
        One page of the artist view, by name or sort name, with album and track counts; --by albumArtist groups \
        by album artist instead of track artist; a track crediting several artists counts under each. An \
        artist's ID lists its albums with `shelf albums --artist ID`. --role lists the people credited in a \
        role instead (lyricist, conductor, remixer, producer, engineer, mixer, djmixer, arranger, performer), \
        each once, with the number of tracks and albums crediting them.
        """
    static let examples = ["shelf artists --limit 20", "shelf artists --by albumArtist --json", "shelf artists --role conductor"]
}

extension ComposersCommand {
    static let discussion = """
        One page of the composer view, by name or sort name, with album and track counts, by keyset cursor.
        """
    static let examples = ["shelf composers", "shelf composers --sort name:desc --limit 10 --json"]
}

extension GenresCommand {
    static let discussion = """
        One page of the genre view, by name, with album and track counts, by keyset cursor.
        """
    static let examples = ["shelf genres", "shelf genres --limit 100 --json"]
}
