import Foundation
import ShelfTestSupport
import Testing

/// `shelf config check`: every mistake of a file with its line, in text and JSON, and the exit
/// status a script can test; which file it reads when none is named.
@Suite struct ConfigCommandTests {
    let products = ChildProcess.productsDirectory()

    func shelf(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try ChildProcess.run(
            products.appendingPathComponent("shelf"), arguments,
            environment: ["XDG_CONFIG_HOME": "/nonexistent-shelf-test-config", "INVOCATION_ID": "", "NOTIFY_SOCKET": ""].merging(environment) { $1 })
    }

    @Test func checkNamesEveryMistakeWithItsLine() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let file = dir.path("config.toml").path
            try Data(
                """
                # shelf serve
                listen = "0.0.0.0:4040"
                max-transcodes = 999
                music = ["\(dir.url.path)", "relative/music"]
                colour = true

                [presets]
                mobile = "opus:96"
                car = "wma:128"
                """.utf8
            ).write(to: URL(fileURLWithPath: file))
            let text = try shelf(["config", "check", file])
            #expect(text.status == 2)
            let lines = text.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(text.stdout)")
            #expect(lines.first?.hasPrefix("\(file):3:18: max-transcodes expects an integer from 1 to 256, got 999") == true, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("\(file):4:9: music: 'relative/music' is not an absolute path") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("\(file):5:1: unknown key 'colour'") }, "\(lines)")
            #expect(lines.last?.hasPrefix("\(file):9:7: preset 'car': 'wma' is not a format") == true, "\(lines)")
            #expect(text.stderr == "shelf: \(file): 4 mistakes\n")

            let json = try shelf(["config", "check", file, "--json"])
            #expect(json.status == 2)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
            #expect(document["file"] as? String == file)
            #expect(document["valid"] as? Bool == false)
            let errors = try #require(document["errors"] as? [[String: Any]])
            #expect(errors.map { $0["line"] as? Int } == [3, 4, 5, 9])
            #expect(errors.map { $0["column"] as? Int } == [18, 9, 1, 7])
            #expect(errors.allSatisfy { !($0["message"] as? String ?? "").isEmpty })

            // Fixed, it passes; the default file is the one under XDG_CONFIG_HOME.
            let config = dir.path("xdg/shelf")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try Data("listen = \"0.0.0.0:4040\"\nmax-transcodes = 4\nmusic = [\"\(dir.url.path)\"]\n[presets]\nmobile = \"opus:96\"\n".utf8)
                .write(to: config.appendingPathComponent("config.toml"))
            let good = try shelf(["config", "check"], environment: ["XDG_CONFIG_HOME": dir.path("xdg").path])
            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
            #expect(good.stdout == "\(config.appendingPathComponent("config.toml").path): ok\n")
            let goodJSON = try shelf(["--json", "config", "check", config.appendingPathComponent("config.toml").path])
            #expect(goodJSON.status == 0)
            let valid = try #require(try JSONSerialization.jsonObject(with: Data(goodJSON.stdout.utf8)) as? [String: Any])
            #expect(valid["valid"] as? Bool == true && (valid["errors"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func backupKeepOfZeroIsRefusedByName() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let file = dir.path("config.toml").path
            try Data("backup-dir = \"\(dir.path("backups").path)\"\nbackup-keep = 0\nbackup-every = \"12h\"\n".utf8).write(to: URL(fileURLWithPath: file))
            let result = try shelf(["config", "check", file])
            #expect(result.status == 2)
            #expect(result.stdout == "\(file):2:15: backup-keep expects how many backups to keep, an integer of 1 or more; got 0\n", "\(result.stdout)")
            try Data("backup-dir = \"\(dir.path("backups").path)\"\nbackup-keep = 2\nbackup-every = \"12h\"\n".utf8).write(to: URL(fileURLWithPath: file))
            let fixed = try shelf(["config", "check", file])
            #expect(fixed.status == 0, "\(fixed.stdout)\(fixed.stderr)")
        }
    }

    @Test func missingFilesAndUsageMistakes() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let missing = try shelf(["config", "check", dir.path("nope.toml").path])
            #expect(missing.status == 2)
            #expect(missing.stdout.contains("nope.toml: does not exist"), "\(missing.stdout)")
            // No file named and none where serve looks: it says where it looked.
            let none = try shelf(["config", "check"])
            #expect(none.status == 2)
            #expect(none.stderr.contains("/nonexistent-shelf-test-config/shelf/config.toml"), "\(none.stderr)")
            // /etc/shelf/config.toml is looked at only under systemd.
            #expect(!none.stderr.contains("/etc/shelf/config.toml"))
            let underSystemd = try shelf(["config", "check"], environment: ["INVOCATION_ID": "0123abcd"])
            if !FileManager.default.fileExists(atPath: "/etc/shelf/config.toml") {
                #expect(underSystemd.stderr.contains("/etc/shelf/config.toml"), "\(underSystemd.stderr)")
            }
            for arguments in [["config"], ["config", "lint"], ["config", "check", "a", "b"]] {
                let result = try shelf(arguments)
                #expect(result.status == 1, "\(arguments)")
                #expect(result.stderr.hasSuffix("; see 'shelf help config'\n"), "\(arguments): \(result.stderr)")
            }
        }
    }
}

/// What `contrib/` ships: the example config passes its own check, and the systemd unit passes
/// `systemd-analyze verify` (where systemd is installed) with the binary it would run.
@Suite struct ContribTests {
    let contrib = HelpCommandTests.packageRoot.appendingPathComponent("contrib")

    @Test func exampleConfigIsValid() async throws {
        try await offCooperativePool {
            let result = try ChildProcess.run(
                ChildProcess.productsDirectory().appendingPathComponent("shelf"), ["config", "check", contrib.appendingPathComponent("config.toml").path])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
    }

    @Test(.enabled(if: HelpCommandTests.tool("systemd-analyze") != nil)) func unitVerifies() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let unit = try String(contentsOf: contrib.appendingPathComponent("shelf.service"), encoding: .utf8)
            #expect(unit.contains("Type=notify") && unit.contains("ProtectSystem=strict") && unit.contains("ProtectHome=read-only"))
            #expect(unit.contains("NoNewPrivileges=true") && unit.contains("PrivateTmp=true") && unit.contains("Restart=on-failure"))
            // verify checks that ExecStart's program exists: point it at this build's.
            let shelf = ChildProcess.productsDirectory().appendingPathComponent("shelf").path
            try Data(unit.replacingOccurrences(of: "/usr/local/bin/shelf", with: shelf).utf8).write(to: dir.path("shelf.service"))
            let result = try ChildProcess.run(
                URL(fileURLWithPath: try #require(HelpCommandTests.tool("systemd-analyze"))), ["verify", "--man=no", dir.path("shelf.service").path])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }
    }
}
