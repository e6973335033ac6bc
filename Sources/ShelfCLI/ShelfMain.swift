import Foundation
import Shelf
import ShelfWire

/// A `shelf` subcommand: its name, a one-line abstract, and how it runs.
protocol Command: Sendable {
    /// The word that selects it.
    static var name: String { get }
    /// One line for the usage text.
    static var abstract: String { get }
    /// The arguments it takes, for the usage text.
    static var synopsis: String { get }
    /// Parses the command's own arguments (validation happens here, before any I/O).
    init(arguments: inout Arguments) throws
    /// Runs against `library`, writing through `output`.
    func run(library: Library, output: Output) async throws
    /// Whether it answers from the read mirror when it is ready (and says so when it is not).
    static var readsMirror: Bool { get }
    /// Adjusts how the library is opened for this command.
    func configure(_ configuration: inout Library.Configuration)
}

extension Command {
    static var readsMirror: Bool { false }
    func configure(_ configuration: inout Library.Configuration) {}
}

/// The `shelf` executable: global options, dispatch, and the mapping of errors to exit codes
/// (0 success, 1 usage error, 2 failure).
@main
struct ShelfMain {
    static let commands: [any Command.Type] = [
        InfoCommand.self, TracksCommand.self, SectionsCommand.self, SnapshotCommand.self, TrackCommand.self, DeleteCommand.self,
        TokenCommand.self, ChangesCommand.self, HistoryCommand.self, MirrorCommand.self, ArtworkCommand.self, MigrateCommand.self, ImportCommand.self, ScanCommand.self, PlaylistCommand.self, SearchCommand.self, AlbumsCommand.self, ArtistsCommand.self, ComposersCommand.self, GenresCommand.self, SmartCommand.self, EditCommand.self, DraftCommand.self, ExportCommand.self, UserCommand.self, ServeCommand.self,
    ]

    static var usage: String {
        var text = "usage: shelf [--library DIR] [--json] COMMAND [ARGS]\n\ncommands:\n"
        for command in commands {
            text += "  \(command.name) \(command.synopsis)\n      \(command.abstract)\n"
        }
        text += """

            The library directory is --library, else $SHELF_LIBRARY, else $XDG_DATA_HOME/shelf,
            else ~/.local/share/shelf. --json prints one JSON document on stdout.
            Exit status: 0 success, 1 usage error, 2 failure.
            """
        return text
    }

    static func main() async {
        var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
        var json = false
        do {
            json = arguments.flag("--json")
            if arguments.flag("--help") || arguments.flag("-h") || arguments.words.first == "help" {
                print(usage)
                exit(0)
            }
            let directory = try arguments.option("--library").map { URL(fileURLWithPath: $0) } ?? Library.defaultDirectory()
            var configuration = Library.Configuration()
            // A command is over in moments: a build started behind it would be cut off at exit. The
            // commands that want the mirror (import, migrate, mirror build) build it as a phase.
            configuration.buildsMirrorInBackground = false
            let timeoutText = try arguments.option("--busy-timeout") ?? ProcessInfo.processInfo.environment["SHELF_BUSY_TIMEOUT_MS"]
            if let timeoutText {
                guard let timeout = Int(timeoutText), timeout >= 0 else {
                    throw UsageError("--busy-timeout expects milliseconds, got '\(timeoutText)'")
                }
                configuration.busyTimeoutMilliseconds = timeout
            }
            guard let name = arguments.words.first else { throw UsageError("missing command") }
            guard let type = commands.first(where: { $0.name == name }) else { throw UsageError("unknown command '\(name)'") }
            arguments = Arguments(Array(arguments.words.dropFirst()))
            let command = try type.init(arguments: &arguments)
            try arguments.finish()
            command.configure(&configuration)
            let library = Library(directory: directory, configuration: configuration)
            if type.readsMirror { await noteMirrorNotReady(library) }
            try await command.run(library: library, output: Output(json: json))
            exit(0)
        } catch let error as UsageError {
            fail(code: "usage", message: error.message, json: json, status: 1, showUsage: true)
        } catch let error as LibraryError {
            fail(code: error.code, message: error.description, json: json, status: 2)
        } catch let error as CommandFailure {
            fail(code: error.code, message: error.message, json: json, status: 2)
        } catch {
            fail(code: "failure", message: String(describing: error), json: json, status: 2)
        }
    }

    static func fail(code: String, message: String, json: Bool, status: Int32, showUsage: Bool = false) -> Never {
        Output.log("shelf: \(message)")
        if showUsage { Output.log("\n" + usage) }
        if json { try? Output(json: true).printJSON(ErrorDocument(code: code, message: message)) }
        exit(status)
    }
}

/// A failure found by a command itself (not by the engine), with its machine-readable code.
struct CommandFailure: Error {
    let code: String
    let message: String
}
