import CShelfBuild
import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// A command about `shelf` itself rather than a library: it runs without opening one, so that
/// `shelf help` or `shelf version` works with no library, no HOME and a read-only disk.
protocol StandaloneCommand: Command {
    /// Runs, writing through `output`.
    func run(output: Output) async throws
}

extension StandaloneCommand {
    func run(library: Library, output: Output) async throws { try await run(output: output) }
}

/// `shelf version`: this build and every library it found, for bug reports.
struct VersionCommand: StandaloneCommand {
    static let name = "version"
    static let abstract =
        "Show shelf's version and commit, the store and mirror schema versions, and the versions of SQLite, TagLib, libjpeg-turbo, libpng, libwebp, libmicrohttpd and ffmpeg."
    static let synopsis = "[--json]"
    static let discussion = """
        The libraries are asked at run time where they can say (SQLite, libpng, libwebp, libmicrohttpd, ffmpeg), so a \
        system upgrade shows here without a rebuild; TagLib 1.x and libjpeg-turbo 2.x have no such call, so theirs \
        are the versions shelf was compiled against. A library that is missing (ffmpeg not installed) is null. \
        The commit is the one `make` built from; a plain `swift build` says "unknown".
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf version", "shelf version --json", "shelf --version"]

    init(arguments: inout Arguments) throws { _ = try arguments.positionals().first.map { throw UsageError("version takes no words, got '\($0)'") } }

    /// `shelf 0.16.0 (abc1234)`: what `--version` prints.
    static var line: String { "shelf \(EngineVersions.version) (\(String(cString: shelf_build_commit())))" }

    func run(output: Output) async throws {
        let document = VersionDocument.current()
        if output.json { return try output.printJSON(document) }
        output.line(Self.line)
        output.line("store schema:  \(document.storeSchema)")
        output.line("mirror schema: \(document.mirrorSchema)")
        for (name, value) in [
            ("SQLite", document.sqlite), ("TagLib", document.taglib), ("libjpeg-turbo", document.libjpegTurbo),
            ("libpng", document.libpng), ("libwebp", document.libwebp), ("libmicrohttpd", document.libmicrohttpd), ("ffmpeg", document.ffmpeg),
        ] {
            output.line("\((name + ":").padding(toLength: 15, withPad: " ", startingAt: 0))\(value ?? "not found")")
        }
    }
}

/// `shelf version --json`: every key always present, null for a library not found.
struct VersionDocument: Encodable {
    let version: String
    let commit: String
    let storeSchema: Int
    let mirrorSchema: Int
    @NullWhenNil var sqlite: String?
    @NullWhenNil var taglib: String?
    @NullWhenNil var libjpegTurbo: String?
    @NullWhenNil var libpng: String?
    @NullWhenNil var libwebp: String?
    @NullWhenNil var libmicrohttpd: String?
    @NullWhenNil var ffmpeg: String?

    /// The versions this process finds now.
    static func current() -> VersionDocument {
        VersionDocument(
            version: EngineVersions.version, commit: String(cString: shelf_build_commit()),
            storeSchema: EngineVersions.storeSchema, mirrorSchema: EngineVersions.mirrorSchema,
            sqlite: EngineVersions.sqlite, taglib: EngineVersions.taglib, libjpegTurbo: EngineVersions.libjpegTurbo,
            libpng: EngineVersions.libpng, libwebp: EngineVersions.libwebp, libmicrohttpd: ShelfServer.microhttpdVersion, ffmpeg: ffmpegVersion())
    }

    /// The version word of `ffmpeg -version`'s first line ("ffmpeg version 5.1.6-0+deb12u1 Copyright…"),
    /// the whole line if it has another shape, nil when there is no ffmpeg on PATH or it does not answer within 10 s.
    static func ffmpegVersion() -> String? {
        guard let path = try? Library.findFFmpeg(), let answer = try? ProgramRunner.run(path, ["-hide_banner", "-version"], timeout: 10) else {
            return nil
        }
        let data = answer.output
        guard let first = String(decoding: data, as: UTF8.self).split(separator: "\n").first else { return nil }
        let words = first.split(separator: " ")
        if words.count >= 3, words[0] == "ffmpeg", words[1] == "version" { return String(words[2]) }
        return String(first)
    }

}

/// `shelf help`: the overview, one command's page, every command's help as JSON, or the man page.
struct HelpCommand: StandaloneCommand {
    static let name = "help"
    static let abstract = "Show the commands, one command's synopsis, flags and examples, or the manual page (--man)."
    static let synopsis = "[COMMAND] [--man] [--markdown] [--json]"
    static let discussion = """
        Every page is generated from the command table, as are the completion scripts and the manual page, so \
        they always agree with what the commands accept. `shelf COMMAND --help` prints the same page as \
        `shelf help COMMAND`. With --json, the help of every command as one document (name, abstract, synopsis, \
        discussion, flags with their defaults, examples).
        """
    static let flags = [
        FlagHelp("--man", nil, "Print shelf(1), the manual page, as roff (`shelf help --man | man -l -`)."),
        FlagHelp("--markdown", nil, "Print the whole reference as Markdown (docs/cli.md is this)."),
    ]
    static let examples = ["shelf help", "shelf help tracks", "shelf help --man | man -l -"]
    static var words: ValueKind { .choices(ShelfMain.commands.map { $0.name }) }

    let topic: String?
    let man: Bool
    let markdown: Bool

    init(arguments: inout Arguments) throws {
        man = arguments.flag("--man")
        markdown = arguments.flag("--markdown")
        let words = try arguments.positionals()
        guard words.count <= 1 else { throw UsageError("help takes at most one command, got '\(words.joined(separator: " "))'") }
        topic = words.first
        if let topic, ShelfMain.command(named: topic) == nil { throw UsageError("unknown command '\(topic)'") }
        if man && topic != nil { throw UsageError("--man prints the whole manual; it takes no command") }
        if markdown && (topic != nil || man) { throw UsageError("--markdown prints the whole reference; it takes no command and no --man") }
    }

    func run(output: Output) async throws {
        if man { return FileHandle.standardOutput.write(Data(ManPage.render().utf8)) }
        if markdown { return FileHandle.standardOutput.write(Data(MarkdownReference.render().utf8)) }
        let types = topic.flatMap(ShelfMain.command(named:)).map { [$0] } ?? ShelfMain.commands
        if output.json { return try output.printJSON(HelpDocument(commands: types)) }
        let text = topic.flatMap(ShelfMain.command(named:)).map(HelpText.page) ?? HelpText.overview()
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// `shelf completions SHELL`: the completion script for bash, zsh or fish.
struct CompletionsCommand: StandaloneCommand {
    static let name = "completions"
    static let abstract = "Print the completion script for bash, zsh or fish: commands, flags, sort fields, formats and paths."
    static let synopsis = "bash|zsh|fish"
    static let discussion = """
        The script is generated from the command table, so it completes exactly the commands and flags this \
        build has. `make install` puts them where each shell looks; to load one by hand, source the bash \
        script, put the zsh one in a directory on $fpath as _shelf, or the fish one in \
        ~/.config/fish/completions/shelf.fish.
        """
    static let flags: [FlagHelp] = []
    static let examples = [
        "source <(shelf completions bash)", "shelf completions zsh > ~/.zfunc/_shelf",
        "shelf completions fish > ~/.config/fish/completions/shelf.fish",
    ]
    static var words: ValueKind { .choices(Completions.shells) }

    let shell: String

    init(arguments: inout Arguments) throws {
        let words = try arguments.positionals()
        guard words.count == 1, Completions.shells.contains(words[0]) else {
            throw UsageError("completions expects one of: \(Completions.shells.joined(separator: ", "))")
        }
        shell = words[0]
    }

    func run(output: Output) async throws {
        FileHandle.standardOutput.write(Data((Completions.script(for: shell) ?? "").utf8))
    }
}
