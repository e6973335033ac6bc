import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf playlist`: ordered playlists and folders. Positions on the command line count from 1,
/// as `show` numbers them; a track may appear more than once.
struct PlaylistCommand: Command {
    static let name = "playlist"
    static let readsMirror = true
    static let abstract =
        "Playlists and folders: list, create, show, page (own order or --sort, with a cursor), add (at a position), move, remove (by position), delete."
    static let synopsis = """
        list | create NAME [--folder] [--parent ID] | show ID | add ID TRACK... [--at POS] | move ID POS... --to POS
              | remove ID POS... | delete ID | page ID [--sort FIELD[:desc]] [--sort-tags on|off] [--filter EXPR] [--after CURSOR] [--limit N]
              | export ID [--format m3u8|m3u] [--relative-to DIR] [--output FILE]   [--json]
        """

    enum Action {
        case list
        case create(name: String, folder: Bool, parent: PlaylistID?)
        case show(PlaylistID)
        case add(PlaylistID, [TrackID], at: Int?)
        case move(PlaylistID, [Int], to: Int)
        case remove(PlaylistID, [Int])
        case delete(PlaylistID)
        case page(PlaylistID, sortedBy: LibraryQuery?, filter: Filter, after: PageCursor?, limit: Int)
        case export(PlaylistID, relativeTo: URL?, output: URL?)
    }

    let action: Action

    init(arguments: inout Arguments) throws {
        let folder = arguments.flag("--folder")
        let parent = try arguments.option("--parent").map(Self.playlistID)
        let at = try arguments.intOption("--at", in: 1...Int.max)
        let to = try arguments.intOption("--to", in: 1...Int.max)
        let sortText = try arguments.option("--sort")
        let sortTags = try arguments.option("--sort-tags")
        let filter = try ListOptions.parseFilter(try arguments.option("--filter") ?? "")
        let limit = try arguments.intOption("--limit", in: 0...100_000) ?? 50
        let after = try ListOptions.parseCursor(&arguments)
        let format = try arguments.option("--format") ?? "m3u8"
        guard format == "m3u8" || format == "m3u" else { throw UsageError("--format expects m3u8 or m3u, got '\(format)'") }
        let relativeTo = try arguments.option("--relative-to").map { URL(fileURLWithPath: $0).standardizedFileURL }
        let exportTo = try arguments.option("--output").map { URL(fileURLWithPath: $0).standardizedFileURL }
        var words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("playlist expects list, create, show, add, move, remove or delete") }
        let verb = words.removeFirst()
        func id() throws -> PlaylistID {
            guard !words.isEmpty else { throw UsageError("playlist \(verb) expects a playlist ID") }
            return try Self.playlistID(words.removeFirst())
        }
        func positions() throws -> [Int] {
            guard !words.isEmpty else { throw UsageError("playlist \(verb) expects at least one position") }
            return try words.map { word in
                guard let value = Int(word), value >= 1 else { throw UsageError("'\(word)' is not a position (1, 2, 3…)") }
                return value - 1
            }
        }
        switch verb {
        case "list": action = .list
        case "create":
            guard words.count == 1 else { throw UsageError("playlist create expects one NAME") }
            action = .create(name: words[0], folder: folder, parent: parent)
        case "show":
            action = .show(try id())
        case "add":
            let playlist = try id()
            guard !words.isEmpty else { throw UsageError("playlist add expects at least one track ID") }
            action = .add(playlist, try words.map(parseTrackID), at: at.map { $0 - 1 })
        case "move":
            let playlist = try id()
            guard let to else { throw UsageError("playlist move needs --to POS") }
            action = .move(playlist, try positions(), to: to - 1)
        case "remove":
            let playlist = try id()
            action = .remove(playlist, try positions())
        case "delete":
            action = .delete(try id())
        case "page":
            let sorted = try sortText.map { try ListOptions.parseSort($0, sortTags: sortTags, filter: .all) }
            action = .page(try id(), sortedBy: sorted, filter: filter, after: after, limit: limit)
        case "export":
            action = .export(try id(), relativeTo: relativeTo, output: exportTo)
        default:
            throw UsageError("unknown playlist action '\(verb)'; expected list, create, show, page, add, move, remove, delete or export")
        }
        if case .list = action, !words.isEmpty { throw UsageError("playlist list takes no arguments") }
    }

    /// An extended M3U in UTF-8: `#EXTINF` with the length and "artist - title", then the path,
    /// absolute or relative to `base` (with `..` where the file is not below it).
    static func m3u8(_ tracks: [Track], relativeTo base: URL?) -> String {
        var text = "#EXTM3U\n"
        for track in tracks {
            let seconds = track.duration.map { Int($0.rounded()) } ?? -1
            let label = [track.artist, track.title].compactMap { $0 }.joined(separator: " - ")
            text += "#EXTINF:\(seconds),\(label.replacingOccurrences(of: "\n", with: " "))\n"
            text += (base.map { relativePath(track.path, from: $0.path) } ?? track.path) + "\n"
        }
        return text
    }

    /// `path` relative to the folder `base`.
    static func relativePath(_ path: String, from base: String) -> String {
        let target = path.split(separator: "/", omittingEmptySubsequences: true)
        let from = base.split(separator: "/", omittingEmptySubsequences: true)
        var common = 0
        while common < target.count, common < from.count, target[common] == from[common] { common += 1 }
        let ups = Array(repeating: "..", count: from.count - common)
        return (ups + target[common...].map(String.init)).joined(separator: "/")
    }

    /// `playlist export --output FILE --json`: where it went and how many entries it holds.
    struct ExportedPlaylist: Encodable {
        let path: String
        let entries: Int
    }

    static func playlistID(_ text: String) throws -> PlaylistID {
        guard let value = Int64(text), value > 0 else { throw UsageError("'\(text)' is not a playlist ID (a positive integer)") }
        return PlaylistID(value)
    }

    /// Positions are checked here so that errors count from 1, as the command line does.
    private func check(_ positions: [Int], in id: PlaylistID, _ library: Library, allowEnd: Bool = false) async throws {
        let count = try await library.playlistItems(id).count
        for position in positions where position < 0 || position > count || (position == count && !allowEnd) {
            throw CommandFailure(code: "invalidValue", message: "position \(position + 1): playlist \(id) has \(count) item\(count == 1 ? "" : "s")")
        }
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case .add(let id, _, let at?): try await check([at], in: id, library, allowEnd: true)
        case .move(let id, let positions, let to):
            try await check(positions, in: id, library)
            try await check([to], in: id, library, allowEnd: true)
        case .remove(let id, let positions): try await check(positions, in: id, library)
        default: break
        }
        switch action {
        case .export(let id, let relativeTo, let destination):
            let document = try await Documents.playlist(id, library)
            let text = Self.m3u8(document.items.map(\.track), relativeTo: relativeTo)
            guard let destination else { return output.line(text, terminator: "") }
            do {
                try Data(text.utf8).write(to: destination, options: .atomic)
            } catch {
                throw CommandFailure(code: "ioError", message: "cannot write \(destination.path): \(error.localizedDescription)")
            }
            if output.json { return try output.printJSON(ExportedPlaylist(path: destination.path, entries: document.items.count)) }
            output.line("wrote \(document.items.count) entries to \(destination.path)")
        case .list:
            let document = try await Documents.playlists(library)
            if output.json { return try output.printJSON(document) }
            for item in document.playlists {
                output.line("\(item.id)\t\(item.kind)\t\(item.name)\t\(item.itemCount) items" + (item.parentID.map { "\tin \($0)" } ?? ""))
            }
        case .create(let name, let folder, let parent):
            let id = try await library.write { batch in
                try batch.createPlaylist(Playlist(name: name, parentID: parent, kind: folder ? .folder : .regular))
            }
            if output.json { return try output.printJSON(["id": id]) }
            output.line("created \(folder ? "folder" : "playlist") \(id)")
        case .show(let id):
            let document = try await Documents.playlist(id, library)
            if output.json { return try output.printJSON(document) }
            output.line("\(document.playlist.name) (\(document.playlist.itemCount) items)")
            for item in document.items {
                output.line("\(item.position)\t\(item.track.id)\t\(item.track.artist ?? "")\t\(item.track.title ?? "")")
            }
        case .add(let id, let tracks, let at):
            try await library.write { batch in
                if let at { try batch.insertIntoPlaylist(id, tracks, at: at) } else { try batch.appendToPlaylist(id, tracks) }
            }
            try await printCount(library, id, output)
        case .move(let id, let positions, let to):
            try await library.write { batch in try batch.movePlaylistItems(id, from: positions, to: to) }
            try await printCount(library, id, output)
        case .remove(let id, let positions):
            try await library.write { batch in try batch.removeFromPlaylist(id, at: positions) }
            try await printCount(library, id, output)
        case .page(let id, let sortedBy, let filter, let after, let limit):
            let page = try await library.playlistList(id, sortedBy: sortedBy, filter: filter, after: after, limit: limit)
            let document = try await Documents.tracks(page, library)
            if output.json { return try output.printJSON(document) }
            let items = document.items
            for item in items { output.line("\(item.section)\t\(item.track.id)\t\(item.track.artist ?? "")\t\(item.track.title ?? "")") }
            output.line("(\(items.count) of \(page.total) items)")
            if let next = page.nextCursor { output.line("next page: --after \(next)") }
        case .delete(let id):
            try await library.write { batch in try batch.deletePlaylist(id) }
            if output.json { return try output.printJSON(["deleted": id]) }
            output.line("deleted \(id)")
        }
    }

    /// Whole tracks for item IDs (a playlist may list one track twice; it is read once).
    static func tracksByID(_ ids: [TrackID], _ library: Library) async throws -> [TrackID: Track] {
        Dictionary(try await library.tracks(ids: ids).tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func printCount(_ library: Library, _ id: PlaylistID, _ output: Output) async throws {
        let document = try await Documents.playlistCount(id, library)
        if output.json { return try output.printJSON(document) }
        output.line("playlist \(id): \(document.itemCount) items")
    }
}

extension PlaylistCommand {
    static let discussion = """
        Ordered playlists and folders that hold them. Positions count from 1 and a track may appear more than \
        once, so move and remove take positions, not track IDs. page lists a playlist in its own order, or \
        sorted and filtered like `shelf tracks`, by cursor. Every change is logged for syncing clients.
        """
    static let flags =
        [
            FlagHelp("--folder", nil, "With create: make a folder, which holds playlists instead of tracks."),
            FlagHelp("--parent", "ID", "With create: the folder to put it in.", default: "the top level"),
            FlagHelp("--at", "POS", "With add: the position to insert at.", default: "the end"),
            FlagHelp("--to", "POS", "With move: the position the entries move to; required."),
            FlagHelp(
                "--format", "m3u8|m3u", "With export: the playlist file's format (both extended M3U in UTF-8).", default: "m3u8",
                completes: .choices(["m3u8", "m3u"])),
            FlagHelp("--relative-to", "DIR", "With export: write paths relative to DIR (where the playlist file will be).", default: "absolute paths"),
            FlagHelp("--output", "FILE", "With export: write the playlist file there.", default: "standard output"),
        ]
        + ListOptions.flags.map { flag in
            FlagHelp(
                flag.name, flag.value, "With page: " + flag.help, default: flag.name == "--sort" ? "the playlist's own order" : flag.defaultValue,
                completes: flag.completes)
        } + [ListOptions.afterFlag, ListOptions.limitFlag]
    static let examples = [
        "shelf playlist create 'Road trip'",
        "shelf playlist add 4 101 102 103 --at 1",
        "shelf playlist page 4 --sort title --limit 20 --json",
    ]
    static var words: ValueKind { .choices(["list", "create", "show", "add", "move", "remove", "delete", "page"]) }
}
