import Foundation
import ShelfTestSupport
import Testing

/// The pages generated from the tables: the committed ones are what the tables make now, so a
/// flag, setting or command added without regenerating them fails here (`make generated-docs`).
@Suite struct GeneratedDocsTests {
    let root = HelpCommandTests.packageRoot
    let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf")

    func generated(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(shelf, arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    @Test(arguments: [
        (["help", "--markdown"], "docs/cli.md"), (["config", "reference"], "docs/config.md"), (["config", "example"], "contrib/config.toml"),
    ])
    func committedPageIsCurrent(_ arguments: [String], _ page: String) async throws {
        try await offCooperativePool { try self.check(arguments, page) }
    }

    /// The body of `committedPageIsCurrent`, on a thread of its own while `shelf` runs.
    func check(_ arguments: [String], _ page: String) throws {
        let committed = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        #expect(try generated(arguments) == committed, "\(page) is out of date: run `make generated-docs`")
    }

    /// Every serve flag and every setting's variable is on its page, and the man page lists the variables.
    @Test func everySettingIsDocumented() async throws {
        try await offCooperativePool {
            let reference = try generated(["config", "reference"])
            let help = try generated(["help", "serve"])
            let man = try generated(["help", "--man"])
            for key in ["podcast-allow-private", "max-transcodes", "backup-every", "jukebox-audio-output"] {
                #expect(reference.contains("## \(key)"), "\(key)")
            }
            for variable in ["SHELF_PODCAST_ALLOW_PRIVATE", "SHELF_MAX_TRANSCODES", "SHELF_MUSIC", "SHELF_BACKUP_KEEP"] {
                #expect(reference.contains("`\(variable)`"), "\(variable)")
                #expect(help.contains(variable) || variable == "SHELF_BACKUP_KEEP", "\(variable) in shelf help serve")
            }
            #expect(man.contains("SHELF_MAX_TRANSCODES") && man.contains("SHELF_<KEY>"))
        }
    }
}

/// `shelf serve`'s settings from the environment: checked as the file's values are, each mistake
/// naming its variable, and ranked between the flags and the file.
@Suite struct ServeEnvironmentTests {
    let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf")

    @Test func aBadVariableStopsServeNamingIt() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            for (variable, value, message) in [
                ("SHELF_MAX_TRANSCODES", "999", "SHELF_MAX_TRANSCODES expects an integer from 1 to 256, got '999'"),
                ("SHELF_WATCH", "maybe", "SHELF_WATCH expects on or off, got 'maybe'"),
                ("SHELF_LISTEN", "localhost", "SHELF_LISTEN expects ADDR:PORT"),
                ("SHELF_PODCAST_DIR", "relative/dir", "SHELF_PODCAST_DIR expects an absolute directory path, got 'relative/dir'"),
                ("SHELF_TLS_CERT", "/etc/cert.pem", "SHELF_TLS_CERT needs SHELF_TLS_KEY too"),
            ] {
                let result = try ChildProcess.run(
                    shelf, ["--library", dir.path("lib").path, "serve"], environment: [variable: value, "XDG_CONFIG_HOME": dir.path("none").path])
                #expect(result.status == 1, "\(variable): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(variable): \(result.stderr)")
            }
        }
    }

    /// The flag wins over the variable, the variable over the file: `config check` is not involved,
    /// so this reads what the running server reports in its reload line.
    @Test func flagsWinOverVariablesWhichWinOverTheFile() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let library = dir.path("lib")
            let user = try ChildProcess.run(shelf, ["--library", library.path, "user", "add", "ann", "--admin", "--password-stdin"], stdin: Data("pw\n".utf8))
            #expect(user.status == 0, "\(user.stderr)")
            let config = dir.path("config.toml")
            try "max-transcodes = 3\nsharing = false\nlog-format = \"json\"\n".write(to: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(
                library: library.path, arguments: ["--config", config.path, "--max-transcodes", "5"],
                environment: ["SHELF_MAX_TRANSCODES": "4", "SHELF_SHARING": "on"])
            defer { server.stop() }
            kill(server.process.processIdentifier, SIGHUP)
            let line = try #require(server.waitForLine { $0.contains("reloaded \(config.path)") })
            // max-transcodes: the flag's 5 over the variable's 4 over the file's 3; sharing: the variable's on
            // over the file's false; log-format: the file's json, which nothing above sets.
            #expect(line.contains("max-transcodes 5"), "\(line)")
            #expect(line.contains("sharing on"), "\(line)")
            #expect(line.hasPrefix("{"), "\(line)")
        }
    }
}
