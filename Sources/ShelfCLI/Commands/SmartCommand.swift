import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf smart`: smart playlists, whose contents follow their rules after every write.
struct SmartCommand: Command {
    static let name = "smart"
    static let readsMirror = true
    static let abstract =
        "Smart playlists: create NAME --rule 'EXPR' (filter language plus playlist:ID, -playlist:ID, dateAdded:last:30d) [--limit N|90m|2h|700MB|4GB --by SELECTION]; show ID."
    static let synopsis =
        "create NAME --rule EXPR [--limit LIMIT --by random|mostPlayed|leastPlayed|highestRated|mostRecentlyAdded|mostRecentlyPlayed] [--parent ID] | show ID [--limit N]   [--json]"

    enum Action {
        case create(name: String, rules: SmartRules, parent: PlaylistID?)
        case show(PlaylistID, limit: Int)
    }

    let action: Action

    init(arguments: inout Arguments) throws {
        let rule = try arguments.option("--rule")
        let limitText = try arguments.option("--limit")
        let by = try arguments.option("--by")
        let parent = try arguments.option("--parent").map(PlaylistCommand.playlistID)
        var words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("smart expects create or show") }
        switch words.removeFirst() {
        case "create":
            guard words.count == 1 else { throw UsageError("smart create expects one NAME") }
            guard let rule else { throw UsageError("smart create needs --rule 'EXPR'") }
            let condition: SmartCondition
            do { condition = try SmartRules.parseCondition(rule) } catch let error as FilterParseError { throw UsageError("--rule: \(error)") }
            let selection = try by.map { text in
                guard let value = SmartSelection(rawValue: text) else {
                    throw UsageError("--by expects one of \(SmartSelection.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'")
                }
                return value
            }
            let limit = try limitText.map(Self.parseLimit)
            if limit != nil && selection == nil { throw UsageError("--limit needs --by (which tracks to keep)") }
            action = .create(name: words[0], rules: SmartRules(condition, limit: limit, selection: selection), parent: parent)
        case "show":
            guard words.count == 1 else { throw UsageError("smart show expects one ID") }
            let limit =
                try limitText.map { text in
                    guard let value = Int(text), value >= 0 else { throw UsageError("--limit expects a count, got '\(text)'") }
                    return value
                } ?? 50
            action = .show(try PlaylistCommand.playlistID(words[0]), limit: limit)
        case let other:
            throw UsageError("smart expects create or show, got '\(other)'")
        }
    }

    /// `25` items, `90m` / `2h` of music, `700MB` / `4GB` of files.
    static func parseLimit(_ text: String) throws -> SmartLimit {
        do { return try Parameters.smartLimit(text) } catch { throw UsageError("--\(error.message)") }
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case .create(let name, let rules, let parent):
            let id = try await library.createSmartPlaylist(name: name, rules: rules, parent: parent)
            if output.json { return try output.printJSON(SmartCreatedDocument(id: id, name: name, rules: rules)) }
            output.line("created smart playlist \(id) '\(name)' (\(try await library.smartPlaylistTracks(id).count) tracks now)")
        case .show(let id, let limit):
            let document = try await Documents.smartPlaylist(id, limit: limit, library)
            if output.json { return try output.printJSON(document) }
            let page = ListPage(items: document.items.map { TrackListItem($0.track, section: $0.section) }, nextCursor: nil, total: document.trackCount)
            try await TracksCommand.print(page, library: library, output: output, suffix: " in smart playlist \(id)")
        }
    }
}

extension SmartCommand {
    static let discussion = """
        Smart playlists are evaluated live: their tracks are whatever matches the rule now. The rule language is \
        the filter language plus playlist:ID, -playlist:ID and dateAdded:last:30d. With --limit and --by, only \
        that much is kept (a count, a duration like 90m or 2h, or a size like 700MB or 4GB), chosen by SELECTION.
        """
    static let flags = [
        FlagHelp("--rule", "EXPR", "With create: which tracks belong; required."),
        FlagHelp(
            "--limit", "LIMIT", "With create: keep N tracks, 90m/2h of music or 700MB/4GB of files (needs --by); with show: the most tracks to print.",
            default: "no limit; 50 with show"),
        FlagHelp("--by", "SELECTION", "With create: which tracks a limit keeps.", completes: .choices(SmartSelection.allCases.map(\.rawValue))),
        FlagHelp("--parent", "ID", "With create: the folder to put it in.", default: "the top level"),
    ]
    static let examples = [
        "shelf smart create 'Loved nineties' --rule 'year:1990..1999 , genre:=Rock' --limit 60m --by mostPlayed",
        "shelf smart create 'New' --rule 'dateAdded:last:30d'",
        "shelf smart show 7 --limit 20 --json",
    ]
    static var words: ValueKind { .choices(["create", "show"]) }
}
