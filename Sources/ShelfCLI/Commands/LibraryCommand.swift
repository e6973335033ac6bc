import Foundation
import Shelf
import ShelfCore

/// `shelf library`: the libraries of the store (named sets of music roots) — add, list, rename,
/// remove. Who sees which is `shelf user … --libraries`.
struct LibraryCommand: Command {
    static let name = "library"
    static let abstract = "Libraries (a name and its music roots): add, list (tracks, albums, size, roots online or offline), rename, remove."
    static let synopsis = "add NAME DIR... | list | rename NAME NEW_NAME | remove NAME [--delete-tracks]   [--json]"

    enum Action {
        case add(name: String, roots: [URL])
        case list
        case rename(name: String, to: String)
        case remove(name: String, deleteTracks: Bool)
    }

    let action: Action

    init(arguments: inout Arguments) throws {
        let deleteTracks = arguments.flag("--delete-tracks")
        var words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("library expects add, list, rename or remove") }
        let verb = words.removeFirst()
        switch verb {
        case "add":
            guard words.count >= 2 else { throw UsageError("library add expects a NAME and at least one DIR") }
            action = .add(name: words[0], roots: words.dropFirst().map { URL(fileURLWithPath: $0) })
        case "list":
            guard words.isEmpty else { throw UsageError("library list takes no arguments") }
            action = .list
        case "rename":
            guard words.count == 2 else { throw UsageError("library rename expects NAME and NEW_NAME") }
            action = .rename(name: words[0], to: words[1])
        case "remove":
            guard words.count == 1 else { throw UsageError("library remove expects one NAME") }
            action = .remove(name: words[0], deleteTracks: deleteTracks)
        default: throw UsageError("unknown library action '\(verb)'; expected add, list, rename or remove")
        }
        if deleteTracks, case .remove = action {} else if deleteTracks { throw UsageError("--delete-tracks applies to library remove only") }
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case .add(let name, let roots):
            for root in roots {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
                    throw LibraryError.invalidValue(field: "music root", value: root.path, reason: "is not a folder")
                }
            }
            let added = try await library.addLibrary(name: name, roots: roots)
            if output.json { return try output.printJSON(["library": added]) }
            output.line("library \(added.name) (ID \(added.id)): \(added.roots.joined(separator: ", "))")
            output.line("import its music with `shelf import \(added.roots.first ?? "DIR") --into \(added.name)`")
        case .list:
            let summaries = try await library.librarySummaries()
            if output.json { return try output.printJSON(["libraries": summaries]) }
            output.line("ID\tNAME\tTRACKS\tALBUMS\tSIZE\tROOTS")
            for item in summaries {
                let roots = item.roots.map { $0.state == "online" ? $0.path : "\($0.path) (offline: \($0.reason ?? "gone"))" }
                output.line(
                    "\(item.id)\t\(item.name)\t\(item.tracks)\t\(item.albums)\t\(ByteCountFormatter.string(fromByteCount: item.bytes, countStyle: .file))\t\(roots.joined(separator: ", "))"
                )
            }
        case .rename(let name, let newName):
            try await library.renameLibrary(name, to: newName)
            if output.json { return try output.printJSON(["library": try await library.musicLibrary(named: newName)]) }
            output.line("renamed library \(name) to \(newName)")
        case .remove(let name, let deleteTracks):
            let removal = try await library.removeLibrary(name, deleteTracks: deleteTracks)
            if removal.tracks > 0 { _ = try await completeMirror(library) }
            if output.json { return try output.printJSON(removal) }
            output.line(
                "removed library \(removal.library)"
                    + (deleteTracks
                        ? " with \(removal.tracks) tracks, \(removal.stars) stars, \(removal.ratings) ratings and \(removal.playlistEntries) playlist entries"
                        : ""))
        }
    }
}

extension LibraryCommand {
    static let discussion = """
        A library is a name and one or more music roots; a root belongs to one library, and a track to the \
        library whose root holds its file. `shelf import DIR --into NAME` and `shelf serve --music NAME=DIR` \
        add roots to a library; `shelf user add|update NAME --libraries A,B` limits what a user sees. A store \
        made before libraries has one, Music, holding the roots it remembered. list shows each library's tracks, \
        albums, size and roots (online or offline). remove refuses a library that holds tracks unless \
        --delete-tracks, which deletes them and says how many tracks, stars, ratings and playlist entries went.
        """
    static let flags = [
        FlagHelp("--delete-tracks", nil, "With remove: delete the library's tracks (and their stars, ratings and playlist entries) with it.")
    ]
    static let examples = [
        "shelf library add Audiobooks /srv/audiobooks",
        "shelf library list --json",
        "shelf library remove Crates --delete-tracks --json",
    ]
    static var words: ValueKind { .choices(["add", "list", "rename", "remove"]) }
}
