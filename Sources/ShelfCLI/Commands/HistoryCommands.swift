import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf token`: the library's current position in its change history.
struct TokenCommand: Command {
    static let name = "token"
    static let abstract = "Print the current change token, to give to `shelf changes --since` later."
    static let synopsis = "[--json]"

    init(arguments: inout Arguments) throws {}

    func run(library: Library, output: Output) async throws {
        let token = try await library.currentToken()
        if output.json { return try output.printJSON(TokenDocument(token: token)) }
        output.line(token.description)
    }
}

/// `shelf changes`: what was inserted, updated and deleted since a token.
struct ChangesCommand: Command {
    static let name = "changes"
    static let abstract = "List changes since a token, one entry per transaction (or one net --summary), optionally seen through playlists."
    static let synopsis = "--since TOKEN [--summary] [--playlist ID]... [--limit N] [--json]"

    let since: ChangeToken
    let summary: Bool
    let playlists: Set<PlaylistID>?
    let limit: Int?

    init(arguments: inout Arguments) throws {
        guard let text = try arguments.option("--since") else { throw UsageError("changes needs --since TOKEN (see `shelf token`)") }
        since = try Library.token(text)
        summary = arguments.flag("--summary")
        var ids: [PlaylistID] = []
        while let value = try arguments.firstOption("--playlist") {
            guard let id = Int64(value), id > 0 else { throw UsageError("'\(value)' is not a playlist ID") }
            ids.append(PlaylistID(id))
        }
        playlists = ids.isEmpty ? nil : Set(ids)
        limit = try arguments.intOption("--limit", in: 1...1_000_000)
        if summary && limit != nil { throw UsageError("--summary and --limit cannot be combined") }
    }

    func run(library: Library, output: Output) async throws {
        // The shape: `{"changes":[{"token":…,"tracks":{…},"playlists":{…},"artwork":{…}}],"token":…}`.
        let result = try await Documents.changes(since: since, summary: summary, scope: playlists, limit: limit, library)
        if output.json { return try output.printJSON(result) }
        for change in result.changes {
            output.line("\(change.token)  \(ISO8601DateFormatter().string(from: change.date))")
            for type in ObjectType.allCases {
                let details = change.details(for: type)
                if !details.inserted.isEmpty { output.line("  \(type) inserted: \(Self.list(details.inserted))") }
                if !details.updated.isEmpty {
                    output.line("  \(type) updated: " + details.updated.map { "\(Self.bare($0.id)) [\($0.groups)]" }.joined(separator: ", "))
                }
                if !details.deleted.isEmpty { output.line("  \(type) deleted: \(Self.list(details.deleted))") }
            }
        }
        output.line("token: \(result.token)\(result.hasMore ? " (more follow)" : "")")
    }

    static func bare(_ key: ObjectKey) -> String {
        switch key {
        case .track(let id): id.description
        case .playlist(let id): id.description
        case .artwork(let id): id.description
        case .playQueue(let id): id.description
        }
    }

    static func list(_ keys: [ObjectKey]) -> String { keys.map(bare).joined(separator: ", ") }
}

/// `shelf history`: a user's listens, newest first; `history export` writes them for another
/// program (ListenBrainz's importer); `history compact` folds old change history into the summary.
struct HistoryCommand: Command {
    static let name = "history"
    static let abstract =
        "A user's listens, newest first; export them as ListenBrainz's importer reads them; compact: fold change history older than the retention into the summary."
    static let synopsis = """
        [--user NAME] [--since DATE] [--limit N] [--json]
              | export [--user NAME] [--since DATE] --format listenbrainz
              | compact [--keep-days N] [--keep-entries N] [--all] [--json]
        """

    enum Action {
        case list(limit: Int)
        case export
        case compact(HistoryRetention)
    }

    let action: Action
    let user: String?
    let since: Date?

    init(arguments: inout Arguments) throws {
        let all = arguments.flag("--all")
        let days = try arguments.intOption("--keep-days", in: 0...1_000_000)
        let entries = try arguments.intOption("--keep-entries", in: 0...Int(Int32.max))
        user = try arguments.option("--user")
        since = try arguments.option("--since").map(Self.date)
        let limit = try arguments.intOption("--limit", in: 1...1_000_000)
        let format = try arguments.option("--format")
        let words = try arguments.positionals()
        switch words {
        case []:
            action = .list(limit: limit ?? 100)
        case ["export"]:
            guard let format else { throw UsageError("history export expects --format listenbrainz") }
            guard format == "listenbrainz" else { throw UsageError("unknown --format '\(format)'; expected listenbrainz") }
            action = .export
        case ["compact"]:
            if all {
                guard days == nil, entries == nil else { throw UsageError("--all cannot be combined with --keep-days or --keep-entries") }
                action = .compact(.none)
            } else if days != nil || entries != nil {
                action = .compact(HistoryRetention(keepDays: days, keepEntries: entries))
            } else {
                action = .compact(HistoryRetention())
            }
        default: throw UsageError("history expects no word (the listens), export or compact; got '\(words.joined(separator: " "))'")
        }
        switch action {
        case .compact:
            if user != nil || since != nil || limit != nil || format != nil {
                throw UsageError("--user, --since, --limit and --format apply to the listens, not to history compact")
            }
        case .list, .export:
            if all || days != nil || entries != nil { throw UsageError("--all, --keep-days and --keep-entries apply to history compact only") }
            if case .export = action, limit != nil { throw UsageError("--limit applies to the listing, not to history export") }
            if case .list = action, format != nil { throw UsageError("--format applies to history export only") }
        }
    }

    /// A day (`2026-11-30`, midnight UTC), a time (`2026-11-30T09:00:00Z`) or seconds since 1970.
    static func date(_ text: String) throws -> Date {
        if let seconds = Double(text), seconds.isFinite { return Date(timeIntervalSince1970: seconds) }
        // Shelf's own reader: Foundation's DateFormatter traps on some text (`InternetDate`).
        if let date = InternetDate.iso8601(text) { return date }
        throw UsageError("--since expects a day (2026-11-30), a time (2026-11-30T09:00:00Z) or seconds since 1970; got '\(text)'")
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case .compact(let retention):
            let report = try await library.compactHistory(retention: retention)
            if output.json { return try output.printJSON(report) }
            output.line("compacted \(report.transactions) transactions (\(report.entries) entries); summary holds \(report.summaryObjects) objects")
            output.line("details kept from \(report.detailsFrom)")
        case .list(let limit):
            let user = try await listener(library)
            let page = try await library.listens(of: user.id, since: since, limit: limit)
            if output.json { return try output.printJSON(ListensDocument(user: user.name, listens: page.listens, nextCursor: page.nextCursor)) }
            if page.listens.isEmpty { return output.line("no listens\(since == nil ? "" : " since then") for \(user.name)") }
            let time = ISO8601DateFormatter()
            output.line("PLAYED\tARTIST\tTITLE\tALBUM\tSOURCE\tCLIENT")
            for listen in page.listens {
                output.line(
                    "\(time.string(from: listen.playedAt))\t\(listen.artist)\t\(listen.title)\t\(listen.album)\t\(listen.source)\t\(listen.client)")
            }
            if page.nextCursor != nil { Output.log("shelf: more listens than --limit \(limit); --since or a larger --limit shows them") }
        case .export:
            let user = try await listener(library)
            var count = 0
            try await library.forEachListen(of: user.id, since: since) { listens in
                for listen in listens {
                    output.line(try ListenExport.listenBrainzLine(listen))
                    count += 1
                }
            }
            Output.log("shelf: exported \(count) listens of \(user.name)")
        }
    }

    /// The user named by --user, or the library's owner.
    private func listener(_ library: Library) async throws -> User {
        if let user {
            guard let found = try await library.user(named: user) else { throw LibraryError.userNotFound(user) }
            return found
        }
        guard let owner = try await library.users().first(where: \.isOwner) else {
            throw UsageError("the library has no users; name one with --user")
        }
        return owner
    }

    /// `{"user":…,"listens":[…],"nextCursor":…}`.
    struct ListensDocument: Encodable {
        let user: String
        let listens: [Listen]
        let nextCursor: String?

        enum CodingKeys: String, CodingKey { case user, listens, nextCursor }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(user, forKey: .user)
            try c.encode(listens, forKey: .listens)
            try c.encode(nextCursor, forKey: .nextCursor)
        }
    }
}

extension TokenCommand {
    static let discussion = """
        Prints the current change token: a client keeps it and later asks `shelf changes --since TOKEN` for \
        everything that happened after it. A token names the store, so one from another library is refused.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf token", "shelf token --json > start-token"]
}

extension ChangesCommand {
    static let discussion = """
        Lists what was inserted, updated (with the property groups that changed) and deleted since a token, one \
        entry per transaction, or one net summary with --summary. With --playlist, changes are also seen through \
        those playlists. A token that expired, or whose details were compacted, is an error that says to \
        refetch (or to use --summary).
        """
    static let flags = [
        FlagHelp("--since", "TOKEN", "The token to start after (from `shelf token` or an earlier answer); required."),
        FlagHelp("--summary", nil, "One net summary instead of one entry per transaction."),
        FlagHelp("--playlist", "ID", "Also report changes to that playlist's entries; repeat for more.", repeats: true),
        FlagHelp("--limit", "N", "The most transactions in one answer (then hasMore is true).", default: "no limit"),
    ]
    static let examples = [
        "shelf changes --since \"$(cat start-token)\"",
        "shelf changes --since shelf1.… --summary --json",
        "shelf changes --since shelf1.… --playlist 3 --limit 100",
    ]
}

extension HistoryCommand {
    static let discussion = """
        Without a word, lists a user's listens (the library's owner unless --user names another), newest \
        first: every play Shelf counted, with when it began, what it was, where it came from (scrobble, \
        reportPlayback, page, jukebox, api, import:…) and the client. export writes them oldest first as JSON \
        lines, one listen each, as ListenBrainz's importer reads them. compact folds per-transaction history older than the retention into the net summary, so the log stays \
        small on a library that changes for years; tokens older than what is kept can still sync by --summary. \
        The retention is both limits: entries older than --keep-days and beyond the newest --keep-entries go.
        """
    static let flags = [
        FlagHelp("--user", "NAME", "Whose listens.", default: "the library's owner"),
        FlagHelp("--since", "DATE", "Only listens from then on: a day (2026-11-30), a time (2026-11-30T09:00:00Z) or seconds since 1970."),
        FlagHelp("--limit", "N", "The most listens listed.", default: "100"),
        FlagHelp("--format", "listenbrainz", "With export: the format written (JSON lines as ListenBrainz imports them)."),
        FlagHelp("--keep-days", "N", "Keep the details of the last N days.", default: "90"),
        FlagHelp("--keep-entries", "N", "Keep the details of the newest N entries.", default: "1000000"),
        FlagHelp("--all", nil, "Fold every entry, whatever its age."),
    ]
    static let examples = [
        "shelf history --user ann --since 2026-11-01", "shelf history --json --limit 1000",
        "shelf history export --user ann --format listenbrainz > ann-listens.jsonl",
        "shelf history compact", "shelf history compact --keep-days 30 --json", "shelf history compact --all",
    ]
    static var words: ValueKind { .choices(["export", "compact"]) }
}
