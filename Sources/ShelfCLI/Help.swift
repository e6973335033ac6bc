import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// What a shell offers for a flag's value or a command's words, so that the completion scripts are
/// generated from the same table as the help, never written by hand.
enum ValueKind: Sendable, Equatable {
    /// Free text (an ID, a number, an expression): nothing to offer.
    case none
    /// A file path.
    case file
    /// A directory path.
    case directory
    /// One of a fixed list of words.
    case choices([String])

    /// The track sort fields, as `--sort` takes them.
    static var sortFields: ValueKind { .choices(SortField.allCases.map(\.rawValue)) }
}

/// One flag of a command: how it is written, what it does, its default, and how to complete its value.
struct FlagHelp: Sendable {
    /// The flag itself, e.g. `--sort`.
    let name: String
    /// Its value's placeholder (`FIELD[:desc]`); nil for a switch.
    let value: String?
    /// One or two sentences on what it does.
    let help: String
    /// What applies when it is absent; nil when there is nothing to say (a switch is off).
    let defaultValue: String?
    /// How a shell completes its value.
    let completes: ValueKind
    /// Whether it may be given more than once (`--set`, `--playlist`).
    let repeats: Bool

    /// A flag's help; `value` nil makes it a switch.
    init(
        _ name: String, _ value: String? = nil, _ help: String, default defaultValue: String? = nil,
        completes: ValueKind = .none, repeats: Bool = false
    ) {
        self.name = name
        self.value = value
        self.help = help
        self.defaultValue = defaultValue
        self.completes = completes
        self.repeats = repeats
    }

    /// `--sort FIELD[:desc]`, as the help and the man page print it.
    var usage: String { value.map { "\(name) \($0)" } ?? name }
}

/// The options `shelf` takes before (or anywhere around) the command, shared by every command.
enum GlobalOptions {
    /// The global flags, for help, completions and the man page.
    static let flags: [FlagHelp] = [
        FlagHelp(
            "--library", "DIR", "The library directory (library.sqlite, mirror.sqlite, secret.key).",
            default: "$SHELF_LIBRARY, else $XDG_DATA_HOME/shelf, else ~/.local/share/shelf", completes: .directory),
        FlagHelp("--json", nil, "Print exactly one JSON document on stdout, errors included ({\"error\":{\"code\",\"message\"}})."),
        FlagHelp(
            "--busy-timeout", "MS", "How long to wait for another process's write lock before failing.",
            default: "$SHELF_BUSY_TIMEOUT_MS, else 5000"),
        FlagHelp("--help", nil, "Print the help of the command (or of shelf) and exit."),
        FlagHelp("--version", nil, "Print `shelf VERSION (COMMIT)` and exit."),
    ]

    /// The environment variables `shelf` reads, with what each does.
    static let environment: [(name: String, help: String)] = [
        ("SHELF_LIBRARY", "The library directory when --library is not given."),
        ("XDG_DATA_HOME", "The library is $XDG_DATA_HOME/shelf when neither --library nor SHELF_LIBRARY is set."),
        ("SHELF_BUSY_TIMEOUT_MS", "The lock wait when --busy-timeout is not given, in milliseconds."),
        ("SHELF_PROGRESS", "`lines`: long jobs print one `progress LABEL DONE/TOTAL` line per step instead of a bar."),
        ("PATH", "Where ffmpeg and ffprobe are looked for (exports, transcodes, formats TagLib cannot read)."),
        ("XDG_CONFIG_HOME", "`shelf serve` reads $XDG_CONFIG_HOME/shelf/config.toml (else ~/.config/shelf/config.toml) when --config is not given."),
        ("NOTIFY_SOCKET", "Where `shelf serve` sends READY=1 and STOPPING=1 (systemd's Type=notify)."),
        ("INVOCATION_ID", "Set by systemd: `shelf serve` then also looks for /etc/shelf/config.toml."),
        ("SHELF_<KEY>", "`shelf serve`'s settings, one variable per config key (SHELF_MAX_TRANSCODES, SHELF_MUSIC=/a:/b, …): over the file, under the flags."),
    ]

    /// The exit statuses, for the overview and the man page.
    static let exitStatus: [(code: String, help: String)] = [
        ("0", "Success."),
        ("1", "A usage error: one line on stderr naming the mistake and the help to read."),
        ("2", "A failure: a one-line message on stderr (and the error document with --json)."),
    ]
}

/// The help texts, all generated from `ShelfMain.commands`: the overview, one command's page, and
/// the JSON form that tests and tools read.
enum HelpText {
    /// The overview `shelf help` prints.
    static func overview() -> String {
        var text = "usage: shelf [--library DIR] [--json] [--busy-timeout MS] COMMAND [ARGS]\n"
        text += "       shelf help COMMAND | shelf COMMAND --help | shelf --version\n\ncommands:\n"
        let width = (ShelfMain.commands.map { $0.name.count }.max() ?? 0) + 2
        for command in ShelfMain.commands {
            text += wrap(
                command.abstract, width: 100, first: "  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0),
                rest: String(repeating: " ", count: width + 2))
        }
        text += "\nglobal options:\n" + flagList(GlobalOptions.flags)
        text +=
            "\nexit status: " + GlobalOptions.exitStatus.map { "\($0.code) \($0.help.lowercased().prefix { $0 != ":" && $0 != "." })" }.joined(separator: ", ")
            + ".\n"
        text += "See 'shelf help COMMAND' for a command's flags and examples, 'shelf help --man' for the manual page.\n"
        return text
    }

    /// The page `shelf help COMMAND` and `shelf COMMAND --help` print.
    static func page(_ command: any Command.Type) -> String {
        var text = wrap("\(command.name) \(command.synopsis)", width: 100, first: "usage: shelf ", rest: "           ")
        text += "\n" + wrap(command.abstract, width: 100, first: "", rest: "")
        text += "\n" + wrap(command.discussion, width: 100, first: "", rest: "")
        if !command.flags.isEmpty { text += "\noptions:\n" + flagList(command.flags) }
        text += "\nglobal options: --library DIR, --json, --busy-timeout MS (see 'shelf help')\n"
        text += "\nexamples:\n" + command.examples.map { "  \($0)\n" }.joined()
        return text
    }

    /// A flag table: the flag and its value, then its help and default, wrapped beside it.
    static func flagList(_ flags: [FlagHelp]) -> String {
        let width = min(28, (flags.map(\.usage.count).max() ?? 0) + 2)
        return flags.map { flag in
            let head = "  " + flag.usage
            let body = flag.help + (flag.defaultValue.map { " (default: \($0))" } ?? "")
            let indent = String(repeating: " ", count: width + 2)
            if head.count > width + 1 { return head + "\n" + wrap(body, width: 100, first: indent, rest: indent) }
            return wrap(body, width: 100, first: head.padding(toLength: width + 2, withPad: " ", startingAt: 0), rest: indent)
        }.joined()
    }

    /// `text` wrapped at `width` columns on spaces, the first line after `first`, the rest after `rest`.
    static func wrap(_ text: String, width: Int, first: String, rest: String) -> String {
        var lines: [String] = []
        var line = first
        var empty = true
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if !empty && line.count + 1 + word.count > width {
                lines.append(line)
                line = rest
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `shelf help --json`: every command's help as data, for tests and tools.
struct HelpDocument: Encodable {
    /// One flag's help.
    struct Flag: Encodable {
        let name: String
        /// Null for a switch, never missing.
        @NullWhenNil var value: String?
        let help: String
        @NullWhenNil var defaultValue: String?
        let repeats: Bool

        /// The JSON form of `flag`.
        init(_ flag: FlagHelp) {
            name = flag.name
            value = flag.value
            help = flag.help
            defaultValue = flag.defaultValue
            repeats = flag.repeats
        }

        private enum CodingKeys: String, CodingKey {
            case name, value, help
            case defaultValue = "default"
            case repeats
        }
    }

    /// One command's help.
    struct Entry: Encodable {
        let name: String
        let abstract: String
        let synopsis: String
        let discussion: String
        let flags: [Flag]
        let examples: [String]
    }

    /// The commands asked about (all of them, or the one named).
    let commands: [Entry]
    /// The options every command takes.
    let globalFlags: [Flag]

    /// The help of `types`, in table order.
    init(commands types: [any Command.Type]) {
        commands = types.map { type in
            Entry(
                name: type.name, abstract: type.abstract, synopsis: type.synopsis, discussion: type.discussion,
                flags: type.flags.map(Flag.init), examples: type.examples)
        }
        globalFlags = GlobalOptions.flags.map(Flag.init)
    }
}

extension ValueKind {
    /// The completion a server setting's table entry asks for.
    init(_ completion: ServerSetting.Completion) {
        switch completion {
        case .none: self = .none
        case .file: self = .file
        case .directory: self = .directory
        case .choices(let words): self = .choices(words)
        }
    }
}
