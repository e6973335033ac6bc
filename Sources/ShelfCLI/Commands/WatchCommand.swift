import Foundation
import Shelf
import ShelfCore

/// `shelf watch [DIR…]`: keeps the library true to its music roots until interrupted, without a
/// server: what is added, rewritten, moved or deleted under them reaches the library in seconds.
struct WatchCommand: Command {
    static let name = "watch"
    static let abstract = "Watch the music roots and bring every change into the library until interrupted."
    static let synopsis = "[DIR…] [--json]"
    static let discussion = """
        Watches every folder under the library's music roots (those given here are remembered as roots first) \
        through inotify, and brings what changes into the library: files added or rewritten are imported once \
        they stop changing (a copied album is one import), a file renamed or moved keeps its track, and a file \
        deleted marks its track missing. A root that goes offline (unmounted, deleted) is left exactly as it \
        was, and is watched and scanned again when it is back. One line per batch (with --json, one JSON \
        object per line); SIGINT or SIGTERM stops it after the batch in hand. When \
        fs.inotify.max_user_watches is too low for every folder it says so once, with the number needed.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf watch", "shelf watch ~/Music", "shelf watch --json"]
    static var words: ValueKind { .file }

    let folders: [URL]

    init(arguments: inout Arguments) throws {
        var folders: [URL] = []
        for word in try arguments.positionals() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: word, isDirectory: &isFolder), isFolder.boolValue else {
                throw UsageError("watch expects music folders, got '\(word)'")
            }
            folders.append(URL(fileURLWithPath: word).standardizedFileURL)
        }
        self.folders = folders
    }

    func run(library: Library, output: Output) async throws {
        let signals = ServeCommand.Signals()
        try await library.rememberRoots(folders)
        let roots = try await library.musicRoots()
        guard !roots.isEmpty else {
            throw CommandFailure(code: "noRoots", message: "the library has no music roots yet; name one (shelf watch DIR) or import a folder first")
        }
        let watcher = LibraryWatcher(library: library, roots: roots.map { URL(fileURLWithPath: $0) }, log: Output.log) { batch in
            if output.json {
                try? output.printJSON(batch)
                return
            }
            var parts: [String] = []
            if let report = batch.imported {
                parts.append("added \(report.added), updated \(report.updated), moved \(report.moved), failed \(report.failed.count)")
                for failure in report.failed { Output.log("failed: \(failure.error)") }
            }
            if batch.missing > 0 { parts.append("missing \(batch.missing)") }
            if batch.rescanned { parts.append("rescanned") }
            for root in batch.offline { parts.append("offline \(root)") }
            if !parts.isEmpty { output.line(parts.joined(separator: "; ")) }
        }
        let coverage: WatchCoverage
        do {
            coverage = try watcher.start()
        } catch {
            throw CommandFailure(code: "watch", message: "cannot watch the music roots: \(error)")
        }
        Output.log("shelf: watching \(coverage.watchedFolders) folders under \(roots.joined(separator: ", ")); Ctrl-C stops")
        await signals.waitForStop()
        await watcher.stop()
    }
}
