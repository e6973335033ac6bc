import Foundation
import Shelf
import ShelfServer

/// `shelf config check [FILE]`: reads a `shelf serve` config file as the server would and names
/// every mistake with its line, without opening a library or starting anything.
struct ConfigCommand: StandaloneCommand {
    static let name = "config"
    static let abstract =
        "Check a `shelf serve` config file: every mistake with its line and column; exit 0 when it is right, 2 when not. Or print the example file or the settings reference."
    static let synopsis = "check [FILE] | example | reference"
    static let discussion = """
        Reads FILE (else the file `shelf serve` would read: $XDG_CONFIG_HOME/shelf/config.toml or \
        ~/.config/shelf/config.toml, else /etc/shelf/config.toml under systemd) with the same reader and \
        checks as the server, and prints each mistake as FILE:LINE:COLUMN: reason, so one run finds them \
        all. Unknown keys and tables are mistakes, never ignored. With --json: {"file":…,"valid":true|false,\
        "errors":[{"line":N,"column":N,"message":…}]}. Exit status 0 when the file is right, 2 when it has \
        mistakes or cannot be read. `config example` prints an example file with every key, its help and \
        default (contrib/config.toml is this); `config reference` prints every setting's key, flag, \
        environment variable, default and help as Markdown (docs/config.md is this).
        """
    static let flags: [FlagHelp] = []
    static let examples = [
        "shelf config check", "shelf config check /etc/shelf/config.toml", "shelf config check --json shelf.toml",
        "shelf config example > ~/.config/shelf/config.toml",
    ]
    static var words: ValueKind { .choices(["check", "example", "reference"]) }

    let file: String?
    /// `example` or `reference`: print that document instead of checking a file.
    let document: String?

    init(arguments: inout Arguments) throws {
        let words = try arguments.positionals()
        if let first = words.first, first == "example" || first == "reference" {
            guard words.count == 1 else { throw UsageError("config \(first) takes no more words") }
            document = first
            file = nil
            return
        }
        document = nil
        guard words.first == "check" else {
            throw UsageError(
                words.first.map { "config has the subcommands check, example and reference; got '\($0)'" } ?? "config needs a subcommand: check [FILE]")
        }
        guard words.count <= 2 else { throw UsageError("config check takes at most one file, got '\(words.dropFirst().joined(separator: " "))'") }
        file = words.count == 2 ? words[1] : nil
    }

    /// `shelf config check --json`.
    struct Document: Encodable {
        struct Mistake: Encodable {
            let line: Int
            let column: Int
            let message: String
        }

        let file: String
        let valid: Bool
        let errors: [Mistake]
    }

    func run(output: Output) async throws {
        if let document {
            return FileHandle.standardOutput.write(Data((document == "example" ? ServerConfig.exampleFile() : ServerConfig.markdownReference()).utf8))
        }
        guard let path = file ?? ServerConfig.defaultPath() else {
            throw CommandFailure(
                code: "noConfig",
                message: "no config file to check: none of \(ServerConfig.searchPaths().joined(separator: ", ")) exists; name one: shelf config check FILE")
        }
        let (_, errors) = ServerConfig.check(ConfigReader.read(path: path), file: path)
        if output.json {
            try output.printJSON(
                Document(
                    file: path, valid: errors.isEmpty, errors: errors.map { .init(line: $0.line, column: $0.column, message: $0.reason) }))
        } else if errors.isEmpty {
            output.line("\(path): ok")
        } else {
            for error in errors { output.line(error.description) }
        }
        guard errors.isEmpty else {
            Output.log("shelf: \(path): \(errors.count) mistake\(errors.count == 1 ? "" : "s")")
            exit(2)
        }
    }
}
