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

/// `shelf history compact`: folds old per-transaction history into the net summary.
struct HistoryCommand: Command {
    static let name = "history"
    static let abstract = "compact: fold history older than the retention (default 90 days or 1,000,000 entries) into the summary."
    static let synopsis = "compact [--keep-days N] [--keep-entries N] [--all] [--json]"

    let retention: HistoryRetention

    init(arguments: inout Arguments) throws {
        let all = arguments.flag("--all")
        let days = try arguments.intOption("--keep-days", in: 0...1_000_000)
        let entries = try arguments.intOption("--keep-entries", in: 0...Int(Int32.max))
        let words = try arguments.positionals()
        guard words == ["compact"] else { throw UsageError("history expects the subcommand 'compact'") }
        if all {
            guard days == nil, entries == nil else { throw UsageError("--all cannot be combined with --keep-days or --keep-entries") }
            retention = .none
        } else if days != nil || entries != nil {
            retention = HistoryRetention(keepDays: days, keepEntries: entries)
        } else {
            retention = HistoryRetention()
        }
    }

    func run(library: Library, output: Output) async throws {
        let report = try await library.compactHistory(retention: retention)
        if output.json { return try output.printJSON(report) }
        output.line("compacted \(report.transactions) transactions (\(report.entries) entries); summary holds \(report.summaryObjects) objects")
        output.line("details kept from \(report.detailsFrom)")
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
        compact folds per-transaction history older than the retention into the net summary, so the log stays \
        small on a library that changes for years; tokens older than what is kept can still sync by --summary. \
        The retention is both limits: entries older than --keep-days and beyond the newest --keep-entries go.
        """
    static let flags = [
        FlagHelp("--keep-days", "N", "Keep the details of the last N days.", default: "90"),
        FlagHelp("--keep-entries", "N", "Keep the details of the newest N entries.", default: "1000000"),
        FlagHelp("--all", nil, "Fold every entry, whatever its age."),
    ]
    static let examples = ["shelf history compact", "shelf history compact --keep-days 30 --json", "shelf history compact --all"]
    static var words: ValueKind { .choices(["compact"]) }
}
