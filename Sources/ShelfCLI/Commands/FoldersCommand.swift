import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// `shelf folders [PATH]`: the libraries' folders as they are on disk — the roots, or one
/// folder's child folders and tracks in file-name order.
struct FoldersCommand: Command {
    static let name = "folders"
    static let abstract = "Browse the libraries' folders as on disk: the roots, or a folder's child folders and tracks."
    static let synopsis = "[PATH | --id FOLDER_ID] [--json]"

    let path: String?
    let id: FolderID?

    init(arguments: inout Arguments) throws {
        let idText = try arguments.option("--id")
        let words = try arguments.positionals()
        guard words.count <= 1 else { throw UsageError("folders expects at most one PATH") }
        guard idText == nil || words.isEmpty else { throw UsageError("folders takes a PATH or --id, not both") }
        if let idText {
            guard let value = Int64(idText), value > 0 else { throw UsageError("--id expects a folder ID (a positive integer), got '\(idText)'") }
            id = FolderID(rawValue: value)
        } else {
            id = nil
        }
        path = words.first.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    func run(library: Library, output: Output) async throws {
        guard path != nil || id != nil else {
            let roots = try await library.rootFolders()
            if output.json { return try output.printJSON(FoldersDocument(folders: roots.map(FolderEntry.init))) }
            let names = Dictionary(try await library.libraries().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            output.line("ID\tLIBRARY\tPATH")
            for root in roots { output.line("\(root.id)\t\(names[root.library] ?? "")\t\(root.path)") }
            return
        }
        let contents: FolderContents?
        if let id { contents = try await library.folder(id) } else { contents = try await library.folder(atPath: path ?? "/") }
        guard let contents else { throw LibraryError.objectNotFound(kind: "folder", id: id.map { String($0.rawValue) } ?? path ?? "") }
        if output.json { return try output.printJSON(try await Documents.folder(contents, library)) }
        output.line("\(contents.folder.path) (ID \(contents.folder.id))")
        for folder in contents.folders { output.line("\(folder.id)\t\(folder.name)/") }
        for track in try await library.tracks(ids: contents.tracks, texts: false).tracks {
            output.line("\(track.id)\t\(URL(fileURLWithPath: track.path).lastPathComponent)\t\(track.artist ?? "")\t\(track.title ?? "")")
        }
    }
}

extension FoldersCommand {
    static let discussion = """
        The folders of every library's roots as they are on disk, the way folder-browsing apps walk them. \
        Without a PATH, the roots; with one (a folder under a root, or --id with an ID from a listing), its \
        child folders, then its tracks in file-name order (the tracks a CUE sheet cuts from an image are where \
        the image is). A folder's ID is stable while its path is: a rescan keeps it, a rename makes a new one. \
        Tracks whose files are missing are left out.
        """
    static let flags = [FlagHelp("--id", "FOLDER_ID", "Open the folder with this ID instead of a PATH.")]
    static let examples = ["shelf folders", "shelf folders ~/Music/Jazz --json", "shelf folders --id 123456789"]
    static var words: ValueKind { .file }
}
