import Foundation
import Shelf

/// `shelf(1)` in roff, written from the command table by `shelf help --man` (and installed by
/// `make install`), so that the manual can never say something the help does not.
enum ManPage {
    /// The whole page.
    static func render() -> String {
        var roff = """
            .TH SHELF 1 "" "shelf \(EngineVersions.version)" "User Commands"
            .SH NAME
            shelf \\- browse, search, edit, export and serve a local music library

            """
        roff += ".SH SYNOPSIS\n.B shelf\n"
        roff += "[\\fB\\-\\-library\\fR \\fIDIR\\fR] [\\fB\\-\\-json\\fR] [\\fB\\-\\-busy\\-timeout\\fR \\fIMS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n"
        roff += ".br\n.B shelf help\n[\\fICOMMAND\\fR | \\fB\\-\\-json\\fR | \\fB\\-\\-man\\fR]\n"
        roff += ".br\n.B shelf \\-\\-version\n"
        roff += ".SH DESCRIPTION\n" + text(
            "shelf is the command line of Shelf, an engine for local music libraries that stays fast at half a million tracks. "
                + "It keeps one SQLite store (library.sqlite) with tracks, artwork, playlists, users and a change history, "
                + "and a derived read mirror (mirror.sqlite) that answers sorted, filtered and searched pages. "
                + "Every command reads or changes that library; shelf serve offers it over HTTP, "
                + "with a JSON API and the OpenSubsonic API.") + "\n"
        roff += ".SH OPTIONS\n" + flags(GlobalOptions.flags)
        roff += ".SH COMMANDS\n"
        for command in ShelfMain.commands {
            roff += ".SS \(text(command.name))\n"
            roff += ".B shelf \(text(command.name))\n\(text(command.synopsis))\n.PP\n"
            roff += text(command.abstract) + "\n.PP\n" + text(command.discussion) + "\n"
            if !command.flags.isEmpty { roff += ".PP\nOptions:\n" + flags(command.flags) }
        }
        roff += ".SH EXAMPLES\n"
        for command in ShelfMain.commands {
            roff += ".PP\n.RS 4\n.nf\n" + command.examples.map { line($0) + "\n" }.joined() + ".fi\n.RE\n"
        }
        roff += ".SH ENVIRONMENT\n"
        for variable in GlobalOptions.environment { roff += ".TP\n.B \(text(variable.name))\n\(text(variable.help))\n" }
        roff += ".SH EXIT STATUS\n"
        for status in GlobalOptions.exitStatus { roff += ".TP\n.B \(status.code)\n\(text(status.help))\n" }
        roff += ".SH FILES\n"
        for (file, help) in [
            ("DIR/library.sqlite", "The canonical store: tracks, artwork, playlists, users, the change history."),
            ("DIR/mirror.sqlite", "The read mirror, derived from the store; rebuilt when deleted."),
            ("DIR/secret.key", "The key that encrypts stored passwords (mode 0600), made on first need."),
            ("~/.local/share/shelf", "The default library directory."),
        ] {
            roff += ".TP\n.I \(text(file))\n\(text(help))\n"
        }
        roff += ".SH SEE ALSO\n.BR ffmpeg (1),\n.BR sqlite3 (1)\n"
        return roff
    }

    /// A flag list as tagged paragraphs: the flag in bold, its value in italics, then its help and default.
    static func flags(_ flags: [FlagHelp]) -> String {
        flags.map { flag in
            let head = "\\fB\(text(flag.name))\\fR" + (flag.value.map { " \\fI\(text($0))\\fR" } ?? "")
            let body = flag.help + (flag.defaultValue.map { " Default: \($0)." } ?? "")
            return ".TP\n\(head)\n\(text(body))\n"
        }.joined()
    }

    /// `value` as roff text: backslashes and hyphens escaped, anything outside ASCII as a `\[uXXXX]`
    /// glyph (groff reads bytes, not UTF-8), and a leading `.` or `'` kept from being a request.
    static func text(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\n": out += " "
            case _ where scalar.value > 0x7E || scalar.value < 0x20:
                out += String(format: "\\[u%04X]", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    /// One example line in no-fill mode.
    static func line(_ value: String) -> String { text(value) }
}
