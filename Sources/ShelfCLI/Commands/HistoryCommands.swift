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
