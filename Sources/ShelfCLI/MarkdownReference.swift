import Foundation

/// `docs/cli.md`, generated from the command table as the help pages, completions and the man
/// page are (`shelf help --markdown`); a test fails when the committed page is out of date.
enum MarkdownReference {
    /// The whole page: the global options, the environment, the exit statuses, then each command.
    static func render() -> String {
        var text = """
            # The `shelf` command line

            Generated from the command table by `shelf help --markdown`; `shelf help COMMAND`, the completion
            scripts and `shelf help --man` come from the same table. `shelf serve`'s settings (config keys, flags
            and `SHELF_*` variables) are in [config.md](config.md).

            ## Global options

            \(flagTable(GlobalOptions.flags))
            ## Environment

            | variable | what it does |
            |---|---|

            """
        for (name, help) in GlobalOptions.environment { text += "| `\(name)` | \(cell(help)) |\n" }
        text += "\n## Exit statuses\n\n| status | meaning |\n|---|---|\n"
        for (code, help) in GlobalOptions.exitStatus { text += "| \(code) | \(cell(help)) |\n" }
        text += "\n## Commands\n\n"
        for command in ShelfMain.commands { text += "- [`\(command.name)`](#shelf-\(command.name)): \(cell(command.abstract))\n" }
        for command in ShelfMain.commands {
            text += "\n## shelf \(command.name)\n\n\(command.abstract)\n\n```\nshelf \(command.name) \(command.synopsis)\n```\n\n\(command.discussion)\n\n"
            if !command.flags.isEmpty { text += flagTable(command.flags) + "\n" }
            if !command.examples.isEmpty { text += "```sh\n" + command.examples.joined(separator: "\n") + "\n```\n" }
        }
        return text
    }

    /// A table of flags with their defaults.
    static func flagTable(_ flags: [FlagHelp]) -> String {
        var text = "| flag | what it does | default |\n|---|---|---|\n"
        for flag in flags {
            text += "| `\(flag.usage)`\(flag.repeats ? " (repeatable)" : "") | \(cell(flag.help)) | \(flag.defaultValue.map(cell) ?? "") |\n"
        }
        return text
    }

    /// Text made safe for one table cell.
    static func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ") }
}
