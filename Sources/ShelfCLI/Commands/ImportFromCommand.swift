import Foundation
import Shelf
import ShelfCore

/// `shelf import-from SOURCE PATH`: stars, ratings, plays, playlists, queues, bookmarks and
/// listens from Navidrome, beets, Apple Music / iTunes, ListenBrainz or Last.fm, matched to the
/// library's tracks without guessing; a second run of the same file changes nothing.
struct ImportFromCommand: Command {
    static let name = "import-from"
    static let abstract = "Bring stars, ratings, plays, playlists and listens from Navidrome, beets, Apple Music, ListenBrainz or Last.fm."
    static let synopsis = "navidrome|beets|itunes|listenbrainz|lastfm PATH [--user NAME] [--map OLD=NEW]... [--dry-run] [--json]"

    let source: ForeignSource
    let path: URL
    let options: ForeignImportOptions

    init(arguments: inout Arguments) throws {
        var options = ForeignImportOptions()
        options.user = try arguments.option("--user")
        options.dryRun = arguments.flag("--dry-run")
        while let text = try arguments.firstOption("--map") {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex else {
                throw UsageError("--map expects OLD_PREFIX=NEW_PREFIX (the folder the other program knew, and where it is now), got '\(text)'")
            }
            options.mappings.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
        }
        let words = try arguments.positionals()
        guard words.count == 2 else { throw UsageError("import-from expects SOURCE and PATH, e.g. import-from navidrome /var/lib/navidrome/navidrome.db") }
        guard let source = ForeignSource(rawValue: words[0].lowercased()) else {
            throw UsageError("unknown source '\(words[0])'; expected navidrome, beets, itunes, listenbrainz or lastfm")
        }
        self.source = source
        path = URL(fileURLWithPath: words[1]).standardizedFileURL
        self.options = options
    }

    func run(library: Library, output: Output) async throws {
        let (source, path, options) = (source, path, options)
        let report = try await runInterruptible(
            label: options.dryRun ? "checking" : "importing",
            cancelledMessage:
                "import-from stopped between transactions; what was written stays, and running it again carries on without counting anything twice"
        ) { progress in
            var options = options
            options.progress = progress
            return try await library.importFrom(source, at: path, options: options)
        }
        if output.json { return try output.printJSON(report) }
        output.line(
            "\(source) \(path.path): matched \(report.matched), ambiguous \(report.ambiguous), unmatched \(report.unmatched)"
                + (report.dryRun ? " (dry run: nothing was written)" : ""))
        if !report.users.isEmpty {
            let created = Set(report.usersCreated)
            output.line(
                "users: "
                    + report.users.map { created.contains($0) ? "\($0) (made; set a password with `shelf user passwd \($0)`)" : $0 }.joined(separator: ", "))
        }
        let a = report.applied
        let parts = [
            (a.stars, "stars"), (a.ratings, "ratings"), (a.plays, "plays"), (a.listens, "listens"), (a.playlists, "playlists"),
            (a.playlistItems, "playlist items"), (a.queues, "play queues"), (a.bookmarks, "bookmarks"), (a.albumStars, "album stars"),
            (a.artistStars, "artist stars"), (a.musicBrainzIDs, "MusicBrainz IDs"), (a.datesAdded, "dates added"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        output.line((report.dryRun ? "would apply: " : "applied: ") + (parts.isEmpty ? "nothing new" : parts.joined(separator: ", ")))
        for item in report.items { output.line("\(item.outcome): \(item.kind) \(item.item): \(item.reason)") }
    }
}

extension ImportFromCommand {
    static let discussion = """
        Reads another program's data and applies it to Shelf's users. navidrome reads navidrome.db: each of its \
        users' stars, ratings, play counts and last plays of songs, albums and artists, playlists in order, play queue \
        and bookmarks, into the Shelf user of the same name (made without a password when missing; --user takes one \
        user only). beets reads library.db (and the config.yaml beside it for its music folder): the rating, play_count, \
        skip_count and last_played attributes and MusicBrainz IDs. itunes reads the Library.xml that Export Library \
        writes: play counts and dates, ratings, loved, skips, date added and every user playlist. listenbrainz reads \
        its JSON export (lines, an array, or the unzipped folder) and lastfm a CSV of artist, album, title and date: \
        listens into the log, counting plays. Tracks are matched by path (after --map), then by MusicBrainz recording \
        ID, then by artist and title (narrowed by album and by a length within 2 s); ambiguous and unmatched items are \
        listed with the reason and never guessed. Counts add only what an earlier import of the same source did not, \
        stars and ratings are set where Shelf has none, so the same file imported twice changes nothing. Writes go \
        through the change log in transactions of a few hundred items; Ctrl-C stops between them.
        """
    static let flags = [
        FlagHelp("--user", "NAME", "The Shelf user the data goes to (Navidrome: only its user of that name).", default: "the owner; Navidrome: every user"),
        FlagHelp("--map", "OLD=NEW", "Rewrite a path prefix before matching (the music folder moved).", repeats: true),
        FlagHelp("--dry-run", nil, "Match and count everything, write nothing."),
    ]
    static let examples = [
        "shelf import-from navidrome /var/lib/navidrome/navidrome.db --map /music=/srv/music --dry-run",
        "shelf import-from beets ~/.config/beets/library.db --user ann",
        "shelf import-from itunes ~/Library.xml --map /Users/ann/Music/Music/Media.localized/Music=/srv/music --json",
        "shelf import-from listenbrainz ~/listenbrainz-export --user ann",
        "shelf import-from lastfm scrobbles.csv --user ann",
    ]
    static var words: ValueKind { .choices(ForeignSource.allCases.map(\.rawValue)) }
}
