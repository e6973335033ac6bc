import CMemory
import Foundation
import Shelf
import ShelfCore
import ShelfServer
import ShelfWire

/// A `shelf` subcommand: its name, a one-line abstract, and how it runs.
protocol Command: Sendable {
    /// The word that selects it.
    static var name: String { get }
    /// One line for the usage text.
    static var abstract: String { get }
    /// The arguments it takes, for the usage text.
    static var synopsis: String { get }
    /// A paragraph on what it does, for its help page and the man page (no default: a command
    /// cannot be added without its help).
    static var discussion: String { get }
    /// Every flag in its synopsis, with its default; the help, completions and man page list these.
    static var flags: [FlagHelp] { get }
    /// Two or three complete command lines that show it in use.
    static var examples: [String] { get }
    /// How a shell completes its positional words (subcommands, paths); nothing by default.
    static var words: ValueKind { get }
    /// Parses the command's own arguments (validation happens here, before any I/O).
    init(arguments: inout Arguments) throws
    /// Runs against `library`, writing through `output`.
    func run(library: Library, output: Output) async throws
    /// Whether it answers from the read mirror when it is ready (and says so when it is not).
    static var readsMirror: Bool { get }
    /// Adjusts how the library is opened for this command.
    func configure(_ configuration: inout Library.Configuration)
    /// The library the command names itself (serve: its config file's `library`), used when
    /// neither --library nor SHELF_LIBRARY names one; nil by default.
    var libraryDirectory: URL? { get }
}

extension Command {
    static var readsMirror: Bool { false }
    static var words: ValueKind { .none }
    func configure(_ configuration: inout Library.Configuration) {}
    var libraryDirectory: URL? { nil }
}

/// The `shelf` executable: global options, dispatch, and the mapping of errors to exit codes
/// (0 success, 1 usage error, 2 failure).
@main
struct ShelfMain {
    /// Every command, in the order help lists them: the one table that parsing, help, completions and the man page read.
    static let commands: [any Command.Type] = [
        InfoCommand.self, TracksCommand.self, SectionsCommand.self, SnapshotCommand.self, TrackCommand.self, DeleteCommand.self,
        TokenCommand.self, ChangesCommand.self, HistoryCommand.self, MirrorCommand.self, ArtworkCommand.self, MigrateCommand.self, ImportCommand.self,
        ScanCommand.self, WatchCommand.self, LoudnessCommand.self, AnalyzeCommand.self, SimilarCommand.self, MixCommand.self, PlaylistCommand.self,
        SearchCommand.self, AlbumsCommand.self, ArtistsCommand.self,
        ComposersCommand.self, GenresCommand.self, SmartCommand.self, EditCommand.self, DraftCommand.self, ExportCommand.self, LibraryCommand.self,
        FoldersCommand.self, ImportFromCommand.self, UserCommand.self,
        ServeCommand.self, ConfigCommand.self, DoctorCommand.self, BackupCommand.self, RestoreCommand.self,
        VersionCommand.self, HelpCommand.self, CompletionsCommand.self,
    ]

    /// The command called `name`, if there is one.
    static func command(named name: String) -> (any Command.Type)? { commands.first { $0.name == name } }

    static func main() async {
        // First, before another thread allocates: glibc lets threads spread over up to eight malloc
        // arenas per core, each keeping what its threads freed, and reads the cap only once. One
        // per core keeps imports' threads apart and a long-running server's RSS near its heap.
        shelf_memory_limit_arenas(Int32(clamping: max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        // The analysis worker speaks a pipe protocol to its parent, not to people: no parsing, no help.
        if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "analyze-worker" {
            let nice = CommandLine.arguments.firstIndex(of: "--nice").flatMap {
                $0 + 1 < CommandLine.arguments.count ? Int32(CommandLine.arguments[$0 + 1]) : nil
            }
            AnalysisWorker.serve(niceness: nice)
            exit(0)
        }
        var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
        var json = false
        var commandName: String?
        do {
            json = arguments.flag("--json")
            let wantsHelp = arguments.flag("--help") || arguments.flag("-h")
            let libraryText = try arguments.option("--library")
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
            if arguments.words.first == "--version" || arguments.words.first == "-V" {
                Output(json: false).line(VersionCommand.line)
                exit(0)
            }
            guard let name = arguments.words.first else {
                if wantsHelp {
                    Output(json: false).line(HelpText.overview(), terminator: "")
                    exit(0)
                }
                throw UsageError("missing command")
            }
            guard let type = command(named: name) else { throw UsageError("unknown command '\(name)'") }
            commandName = name
            if wantsHelp {
                Output(json: false).line(HelpText.page(type), terminator: "")
                exit(0)
            }
            arguments = Arguments(Array(arguments.words.dropFirst()))
            let command = try type.init(arguments: &arguments)
            try arguments.finish()
            let output = Output(json: json)
            if let standalone = command as? any StandaloneCommand {
                try await standalone.run(output: output)
                exit(0)
            }
            let environmentLibrary = !(ProcessInfo.processInfo.environment["SHELF_LIBRARY"] ?? "").isEmpty
            let directory =
                libraryText.map { URL(fileURLWithPath: $0) } ?? (environmentLibrary ? nil : command.libraryDirectory)
                ?? Library.defaultDirectory()
            command.configure(&configuration)
            let library = Library(directory: directory, configuration: configuration)
            if type.readsMirror { await noteMirrorNotReady(library) }
            try await command.run(library: library, output: output)
            exit(0)
        } catch let error as UsageError {
            // One line: the mistake and where to read the right way, not the whole usage.
            let help = commandName.map { "shelf help \($0)" } ?? "shelf help"
            fail(code: "usage", message: error.message, json: json, status: 1, hint: "; see '\(help)'")
        } catch let error as ConfigFileError {
            // A mistake in a config file is a mistake in how shelf was called: status 1, one line
            // per mistake (`FILE:LINE:COLUMN: reason`), so a service manager can tell it from a failure.
            for mistake in error.errors { Output.log("shelf: \(mistake)") }
            if json { try? Output(json: true).printJSON(ErrorDocument(code: "invalidConfig", message: error.description)) }
            exit(1)
        } catch let error as any ClassifiedError {
            fail(code: error.errorCode, message: error.description, json: json, status: exitStatus(error.kind))
        } catch let error as CommandFailure {
            fail(code: error.code, message: error.message, json: json, status: 2)
        } catch {
            fail(code: "failure", message: String(describing: error), json: json, status: 2)
        }
    }

    /// The exit status of an engine error. Every kind is a failure of what was asked (2), which
    /// scripts tell from a mistake in how shelf was called (1); the switch is exhaustive so that a
    /// new kind has to be placed.
    static func exitStatus(_ kind: ErrorKind) -> Int32 {
        switch kind {
        case .notFound, .conflict, .invalid, .forbidden, .expired, .busy, .full, .damaged, .unavailable, .internal: 2
        }
    }

    /// Reports an error as one stderr line (`hint` appended) and, with `--json`, the error document, then exits.
    static func fail(code: String, message: String, json: Bool, status: Int32, hint: String = "") -> Never {
        Output.log("shelf: \(message)\(hint)")
        if json { try? Output(json: true).printJSON(ErrorDocument(code: code, message: message)) }
        exit(status)
    }
}

/// A failure found by a command itself (not by the engine), with its machine-readable code.
struct CommandFailure: Error {
    let code: String
    let message: String
}
