import Foundation
import ShelfTestSupport
import Testing

/// `shelf` as an installed program: its version, the help of every command (generated from the
/// command table, so a command without help fails here), one-line usage errors, the completion
/// scripts in real shells, the man page through groff, and `make install`/`uninstall`.
@Suite struct HelpCommandTests {
    let products = ChildProcess.productsDirectory()
    /// The package root, where the Makefile is.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func shelf(_ arguments: [String]) throws -> ProcessResult {
        try ChildProcess.run(products.appendingPathComponent("shelf"), arguments)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The path of `tool` on PATH, nil when it is not installed.
    static func tool(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `tool` from PATH with `arguments`.
    func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try ChildProcess.run(URL(fileURLWithPath: try #require(Self.tool(tool))), arguments, environment: environment)
    }

    @Test func versionLineAndDocument() async throws {
        try await offCooperativePool {
            let line = try shelf(["--version"])
            #expect(line.status == 0)
            #expect(line.stdout.wholeMatch(of: /shelf \d+\.\d+\.\d+ \(([0-9a-f]{4,}|unknown)\)\n/) != nil, "\(line.stdout)")
            #expect(try shelf(["version"]).stdout.hasPrefix(line.stdout))
            let document = try json(try shelf(["version", "--json"]).stdout)
            for key in ["version", "commit", "storeSchema", "mirrorSchema", "sqlite", "taglib", "libjpegTurbo", "libpng", "libwebp", "libmicrohttpd", "ffmpeg"]
            {
                #expect(document.keys.contains(key), "missing \(key)")
            }
            #expect(document["storeSchema"] as? Int == 18)
            #expect((document["mirrorSchema"] as? Int ?? 0) > 0)
            // Every library shelf links is there whenever it runs; only ffmpeg, a separate program, may be null.
            for key in ["sqlite", "taglib", "libjpegTurbo", "libpng", "libwebp", "libmicrohttpd"] {
                #expect((document[key] as? String)?.wholeMatch(of: /\d+\.\d+(\.\d+)?.*/) != nil, "\(key): \(String(describing: document[key]))")
            }
            #expect(line.stdout.contains("(\(document["commit"] as? String ?? "?"))"))
            let bench = try ChildProcess.run(products.appendingPathComponent("shelf-bench"), ["--version"])
            #expect(bench.status == 0)
            #expect(bench.stdout == line.stdout.replacingOccurrences(of: "shelf ", with: "shelf-bench "))
        }
    }

    /// Every command of the table: a paragraph, an entry for every flag its synopsis names, at
    /// least two examples of itself, and the same page from `help NAME` and `NAME --help`.
    @Test func everyCommandHasHelp() async throws {
        try await offCooperativePool {
            let document = try json(try shelf(["help", "--json"]).stdout)
            let commands = try #require(document["commands"] as? [[String: Any]])
            #expect(commands.count >= 29)
            let globals = Set(try #require(document["globalFlags"] as? [[String: Any]]).compactMap { $0["name"] as? String })
            #expect(globals.isSuperset(of: ["--library", "--json", "--busy-timeout", "--help", "--version"]))
            let overview = try shelf(["help"])
            #expect(overview.status == 0)
            for command in commands {
                let name = try #require(command["name"] as? String)
                let synopsis = try #require(command["synopsis"] as? String)
                #expect((command["discussion"] as? String ?? "").count > 80, "\(name): no paragraph")
                let examples = command["examples"] as? [String] ?? []
                #expect(examples.count >= 2, "\(name): fewer than two examples")
                for example in examples {
                    let words = example.split(separator: " ").map(String.init)
                    #expect(example.contains("shelf") && (words.contains(name) || words.contains("--\(name)")), "\(name): \(example)")
                }
                let flags = try #require(command["flags"] as? [[String: Any]])
                let documented = Set(flags.compactMap { $0["name"] as? String })
                for flag in flags { #expect(!(flag["help"] as? String ?? "").isEmpty, "\(name) \(flag)") }
                let named = Set(synopsis.matches(of: /--[a-z][a-z-]*/).map { String($0.output) }).subtracting(globals)
                #expect(named.isSubset(of: documented), "\(name): no help for \(named.subtracting(documented).sorted())")
                let page = try shelf(["help", name])
                #expect(page.status == 0, "\(name)")
                #expect(page.stdout.contains("usage: shelf \(name)"))
                #expect(page.stdout.contains("examples:"))
                for flag in documented { #expect(page.stdout.contains(flag), "\(name): \(flag) not on its page") }
                #expect(try shelf([name, "--help"]).stdout == page.stdout, "\(name)")
                #expect(overview.stdout.contains("  \(name) "), "\(name) missing from the overview")
            }
            // A default shows on the page beside its flag.
            #expect(try shelf(["help", "tracks"]).stdout.contains("(default: artist)"))
            #expect(try shelf(["help", "nope"]).status == 1)
        }
    }

    /// A usage error is one line naming the mistake and the help page to read, still exit 1 and
    /// still the error document with --json.
    @Test func usageErrorIsOneLine() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            for (arguments, help) in [
                (["tracks", "--sort", "nope"], "shelf help tracks"), (["frobnicate"], "shelf help"),
                (["tracks", "--bogus"], "shelf help tracks"), ([], "shelf help"), (["completions", "tcsh"], "shelf help completions"),
            ] {
                let result = try shelf(["--library", dir.url.path] + arguments)
                #expect(result.status == 1, "\(arguments)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
                #expect(result.stderr.hasSuffix("; see '\(help)'\n"), "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains("usage:"))
            }
            let sort = try shelf(["--library", dir.url.path, "tracks", "--sort", "nope"])
            #expect(sort.stderr.contains("'nope'"))
            let jsonResult = try shelf(["--library", dir.url.path, "tracks", "--sort", "nope", "--json"])
            #expect(try (json(jsonResult.stdout)["error"] as? [String: Any])?["code"] as? String == "usage")
            // Help, version and completions never open (or create) a library.
            for arguments in [["help"], ["version"], ["completions", "bash"], ["help", "--man"]] {
                #expect(try shelf(["--library", dir.path("never").path] + arguments).status == 0)
            }
            #expect(!FileManager.default.fileExists(atPath: dir.path("never").path))
        }
    }

    /// Completes `words` (the last is being typed) with the bash script loaded in a real bash.
    func bashComplete(_ script: URL, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let result = try run(
            "bash",
            [
                "--norc", "--noprofile", "-c",
                "source '\(script.path)' && COMP_WORDS=(\(quoted)) && COMP_CWORD=\(words.count - 1) && _shelf && printf '%s\\n' \"${COMPREPLY[@]}\"",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: tool("bash") != nil)) func bashCompletesCommandsFlagsSortFieldsAndPaths() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let script = dir.path("shelf.bash")
            try Data(try shelf(["completions", "bash"]).stdout.utf8).write(to: script)
            let sorts = try bashComplete(script, ["shelf", "tracks", "--sort", "al"])
            #expect(Set(sorts) == ["album", "albumArtist"], "\(sorts)")
            #expect(try bashComplete(script, ["shelf", "--library", "x", "tra"]) == ["tracks", "track"])
            #expect(try bashComplete(script, ["shelf", "export", "--format", "o"]) == ["opus"])
            #expect(Set(try bashComplete(script, ["shelf", "tracks", "--so"])) == ["--sort", "--sort-tags"])
            #expect(try bashComplete(script, ["shelf", "mirror", "st"]) == ["status"])
            try Data().write(to: dir.path("song.flac"))
            #expect(try bashComplete(script, ["shelf", "import", dir.path("so").path]) == [dir.path("song.flac").path])
        }
    }

    @Test(.enabled(if: tool("fish") != nil)) func fishCompletesSortFields() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let script = dir.path("shelf.fish")
            try Data(try shelf(["completions", "fish"]).stdout.utf8).write(to: script)
            let result = try run("fish", ["--no-config", "-c", "source '\(script.path)'; complete -C 'shelf tracks --sort al'"])
            #expect(result.status == 0, "\(result.stderr)")
            let words = Set(result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
            #expect(words.isSuperset(of: ["album", "albumArtist"]), "\(result.stdout)")
        }
    }

    @Test(.enabled(if: tool("zsh") != nil)) func zshScriptParses() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let script = dir.path("_shelf")
            try Data(try shelf(["completions", "zsh"]).stdout.utf8).write(to: script)
            let result = try run("zsh", ["-n", script.path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        }
    }

    @Test(.enabled(if: tool("groff") != nil)) func manPageRendersWithoutWarnings() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let page = dir.path("shelf.1")
            let man = try shelf(["help", "--man"])
            #expect(man.status == 0)
            try Data(man.stdout.utf8).write(to: page)
            let rendered = try run("groff", ["-ww", "-man", "-Tutf8", page.path])
            #expect(rendered.status == 0)
            #expect(rendered.stderr.isEmpty, "\(rendered.stderr)")
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXAMPLES", "ENVIRONMENT", "EXIT STATUS", "FILES"] {
                #expect(man.stdout.contains(".SH \(section)\n"), "\(section)")
            }
            // Every command is in it (its name as a subsection), non-ASCII text as glyphs groff knows.
            for name in try #require(try json(try shelf(["help", "--json"]).stdout)["commands"] as? [[String: Any]]).compactMap({ $0["name"] as? String }) {
                // roff's minus sign for a hyphen, so `import-from` copies out of the page as typed.
                #expect(man.stdout.contains(".SS \(name.replacingOccurrences(of: "-", with: "\\-"))\n"), "\(name)")
            }
            let ascii = man.stdout.unicodeScalars.allSatisfy { $0.isASCII }
            #expect(ascii)
        }
    }

    /// `make install` into a temporary DESTDIR with the binary this build made (no release build),
    /// then `make uninstall` removes exactly what it wrote.
    @Test(.enabled(if: tool("make") != nil)) func makeInstallAndUninstall() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let destination = dir.path("root")
            let common = [
                "-C", Self.packageRoot.path, "SHELF_BIN=\(products.appendingPathComponent("shelf").path)",
                "DESTDIR=\(destination.path)", "PREFIX=/usr",
            ]
            let install = try run("make", ["--no-print-directory", "install"] + common)
            #expect(install.status == 0, "\(install.stdout)\(install.stderr)")
            let files = [
                "bin/shelf", "share/man/man1/shelf.1", "share/bash-completion/completions/shelf",
                "share/zsh/site-functions/_shelf", "share/fish/vendor_completions.d/shelf.fish",
            ]
            func installed() -> [String] {
                let root = destination.appendingPathComponent("usr").path
                let enumerator = FileManager.default.enumerator(atPath: root)
                var found: [String] = []
                while let path = enumerator?.nextObject() as? String {
                    var isDirectory: ObjCBool = false
                    if FileManager.default.fileExists(atPath: "\(root)/\(path)", isDirectory: &isDirectory), !isDirectory.boolValue { found.append(path) }
                }
                return found.sorted()
            }
            #expect(installed() == files.sorted())
            let binary = destination.appendingPathComponent("usr/bin/shelf")
            #expect(FileManager.default.isExecutableFile(atPath: binary.path))
            #expect(try ChildProcess.run(binary, ["--version"]).stdout == (try shelf(["--version"]).stdout))
            let man = try String(contentsOf: destination.appendingPathComponent("usr/share/man/man1/shelf.1"), encoding: .utf8)
            #expect(man.hasPrefix(".TH SHELF 1"))
            let bash = try String(contentsOf: destination.appendingPathComponent("usr/share/bash-completion/completions/shelf"), encoding: .utf8)
            #expect(bash.contains("complete -F _shelf shelf"))
            let attributes = try FileManager.default.attributesOfItem(atPath: destination.appendingPathComponent("usr/share/man/man1/shelf.1").path)
            #expect((attributes[.posixPermissions] as? Int) == 0o644)
            // A file of someone else's beside them stays.
            let other = destination.appendingPathComponent("usr/bin/other")
            try Data("x".utf8).write(to: other)
            let uninstall = try run("make", ["--no-print-directory", "uninstall"] + common)
            #expect(uninstall.status == 0, "\(uninstall.stdout)\(uninstall.stderr)")
            #expect(installed() == ["bin/other"])
        }
    }
}
