import Foundation
import ShelfTestSupport
import Testing

/// The web page's files as `shelf serve` sends them: every file of `Web/files`, byte for byte,
/// with its type, a strong ETag honoured with 304, and a policy that allows no inline script or
/// style; and the page itself driven by headless Chromium (web_page_test.py).
@Suite(.serialized) struct WebPageTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let files = repository.appendingPathComponent("Sources/ShelfServer/Web/files")

    // The two browser suites come first: the suite is serialized and they are its longest tests,
    // so starting them with the run keeps them off the end of `make test`.
    /// Real audio files: sign in, play and the queue, the edit dialog (the list, `shelf track`
    /// and the file's tags), `shelf import` from the command line while the page is open, screenshots.
    @Test func theBrowserSuiteOnSampleFiles() async throws {
        try await offCooperativePool {
            guard let python = Self.browserPython() else { return }
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-web-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
            let library = root.appendingPathComponent("library").path
            // Three seconds a track, so the position is seen to advance; the later import's files
            // have other audio (two seconds), so they are new tracks, not the same ones again.
            for (dir, tracks, seconds) in [("music", 24, "3"), ("more", 6, "2")] {
                let written = try ChildProcess.run(
                    bench, ["sample-files", "--tracks", "\(tracks)", "--dir", root.appendingPathComponent(dir).path, "--seconds", seconds])
                try #require(written.status == 0, "\(written.stderr)")
            }
            let shelf = ServedLibrary.shelfBinary()
            try #require(try ChildProcess.run(shelf, ["--library", library, "import", root.appendingPathComponent("music").path]).status == 0)
            try #require(
                try ChildProcess.run(
                    shelf, ["--library", library, "user", "add", "ann", "--admin", "--password-stdin"], stdin: Data((ServedLibrary.annPassword + "\n").utf8)
                ).status == 0)
            // The music folder is the server's, so the admin page's scan has a folder to scan; the
            // backup folder is too, so its backups are listed and one is taken.
            let config = root.appendingPathComponent("shelf.toml")
            try "backup-dir = \"\(root.appendingPathComponent("backups").path)\"\n".write(to: config, atomically: true, encoding: .utf8)
            let server = try ServerProcess(
                library: library, arguments: ["--config", config.path, "--music", root.appendingPathComponent("music").path])
            defer { server.stop() }
            let result = try Self.runSuite("sample", python: python, server: server, library: library, importDir: root.appendingPathComponent("more").path)
            print(result.stdout)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(4000))")
            // Every check ran and passed (a skipped one prints nothing, so each is named here).
            for check in [
                "play a track", "edit a title", "shelf import and shelf edit", "gapless joins and ReplayGain", "synced lyrics",
                "the queue resumed on another device", "a share from the selection", "admin: users", "settings: theme",
                "the library views", "Japanese everywhere", "the shell offline", "a keyboard walk", "every view at 390x844",
            ] where ProcessInfo.processInfo.environment["SHELF_WEB_ONLY"] == nil {
                #expect(result.stdout.contains("ok   \(check)"), "\(check)")
            }
            // axe-core comes from PyPI (make subsonic-client); without it the check says it skipped.
            #expect(result.stdout.contains("ok   axe on every view") || result.stdout.contains("skip axe"))
        }
    }

    /// A generated library of 500,500 tracks in `make test-full` (30,000 in `make test`, 10,000
    /// under a sanitizer; `SHELF_WEB_TRACKS` to change it) with a picture per album: first rows, jumps to M and か, the end of the list, sorting, search
    /// as you type, a filter mistake, DOM nodes and heap flat over the whole list, the keyboard, covers.
    @Test func theBrowserSuiteOnAGeneratedLibrary() async throws {
        try await offCooperativePool {
            guard let python = Self.browserPython() else { return }
            // 30,000 in make test: long enough that the memory check measures the list, not the page's
            // own start; the page's heap is the same there as at 100,000 and 500,500 (1.5 MB at the
            // top, 1.7 MB after the whole list), and fewer tracks save CPU make test is short of.
            let scaled = TestScale.full ? 500_500 : TestScale.sanitized ? 10_000 : 30_000
            let tracks = Int(ProcessInfo.processInfo.environment["SHELF_WEB_TRACKS"] ?? "") ?? scaled
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-web-big-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let library = root.appendingPathComponent("library").path
            let bench = ChildProcess.productsDirectory().appendingPathComponent("shelf-bench")
            let generated = try ChildProcess.run(bench, ["generate", "--tracks", "\(tracks)", "--library", library, "--artwork-px", "64"])
            try #require(generated.status == 0, "\(generated.stderr)")
            let shelf = ServedLibrary.shelfBinary()
            try #require(
                try ChildProcess.run(
                    shelf, ["--library", library, "user", "add", "ann", "--admin", "--password-stdin"], stdin: Data((ServedLibrary.annPassword + "\n").utf8)
                ).status == 0)
            let server = try ServerProcess(library: library)
            defer { server.stop() }
            let result = try Self.runSuite("big", python: python, server: server, library: library)
            print(result.stdout)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(4000))")
            #expect(result.stdout.contains("ok   DOM nodes and heap flat"))
        }
    }

    @Test func everyFileIsServedWithItsTypeETagAndPolicy() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let client = Curl(base: server.base)  // no session: the files need none

            let page = try client.request("GET", "/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            let policy = try #require(page.headers["content-security-policy"])
            for directive in [
                "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'", "media-src 'self'",
            ] {
                #expect(policy.contains(directive), "\(policy)")
            }
            #expect(!policy.contains("unsafe"))
            #expect(page.headers["x-content-type-options"] == "nosniff")

            let names = try FileManager.default.contentsOfDirectory(atPath: Self.files.path).filter { !$0.hasPrefix(".") }.sorted()
            #expect(names.contains("index.html") && names.contains("app.js"))
            let types = [
                "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml",
                "webmanifest": "application/manifest+json; charset=utf-8",
            ]
            for name in names {
                let onDisk = try Data(contentsOf: Self.files.appendingPathComponent(name))
                let served = try client.request("GET", "/app/\(name)")
                #expect(served.status == 200, "\(name): \(served.status)")
                #expect(served.body == onDisk, "\(name) is not served as it is in the tree (is it in WebFiles.all?)")
                #expect(served.headers["content-type"] == types[String(name.split(separator: ".").last ?? "")], "\(name)")
                let etag = try #require(served.headers["etag"], "\(name) has no ETag")
                #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
                let again = try client.request("GET", "/app/\(name)", headers: ["If-None-Match": etag])
                #expect(again.status == 304 && again.body.isEmpty, "\(name): \(again.status)")
                #expect(again.headers["etag"] == etag)
                let stale = try client.request("GET", "/app/\(name)", headers: ["If-None-Match": "\"other\""])
                #expect(stale.status == 200)
            }
            #expect(try client.request("HEAD", "/app/app.js").status == 200)

            let missing = try client.request("GET", "/app/nothing.js")
            #expect(missing.status == 404)
            #expect(((missing.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "notFound")
            #expect(try client.request("GET", "/app/../secret.key", extra: ["--path-as-is"]).status == 400)
            #expect(try client.request("POST", "/").status == 405)
            // The API still asks for a session.
            #expect(try client.request("GET", "/api/tracks").status == 401)
        }
    }

    /// The rename the page's sidebar uses: the owner (or an admin) renames; others cannot; a blank
    /// name is refused; a cookie without the anti-forgery header is refused.
    @Test func aPlaylistIsRenamedByItsOwner() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            let write = ["X-Shelf-Request": "1"]
            let created = try bob.request("POST", "/api/playlists", headers: write, body: Curl.json(["name": "Mine", "public": true]))
            #expect(created.status == 201, "\(created.text)")
            let id = try #require((created.json as? [String: Any])?["id"] as? Int)
            let renamed = try bob.request("POST", "/api/playlists/\(id)/rename", headers: write, body: Curl.json(["name": "  Ours  "]))
            #expect(renamed.status == 200, "\(renamed.text)")
            #expect(sameJSON(renamed.json, ["id": id, "name": "Ours"]))
            let listed = try bob.request("GET", "/api/playlists").json as? [String: Any]
            let names = (listed?["playlists"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
            #expect(names.contains("Ours") && !names.contains("Mine"))
            #expect(try bob.request("POST", "/api/playlists/\(id)/rename", headers: write, body: Curl.json(["name": " "])).status == 400)
            #expect(try bob.request("POST", "/api/playlists/\(id)/rename", body: Curl.json(["name": "Forged"])).status == 403)
            #expect(try bob.request("POST", "/api/playlists/999/rename", headers: write, body: Curl.json(["name": "X"])).status == 404)
            // Another user sees the public playlist but may not rename it; an admin may.
            try #require(try fixture.shelf(["user", "add", "cat", "--password-stdin"], stdin: "cat-pass\n").status == 0)
            let cat = try signedIn(server, "cat", "cat-pass")
            #expect(try cat.request("POST", "/api/playlists/\(id)/rename", headers: write, body: Curl.json(["name": "Cat's"])).status == 403)
            let ann = try signedIn(server)
            #expect(try ann.request("POST", "/api/playlists/\(id)/rename", headers: write, body: Curl.json(["name": "Admin's"])).status == 200)
        }
    }

    /// The views' sections, behind the grids' jump bar: every item counted once, and each section
    /// starting where the view's own pages say its first item is.
    @Test func theViewsHaveSections() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 30)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let client = try signedIn(server)
            for (view, parameters) in [("albums", ""), ("artists", "by=albumArtist"), ("composers", ""), ("genres", ""), ("albums", "sortTags=off")] {
                let page = try #require(try client.request("GET", "/api/\(view)?limit=1000&\(parameters)").json as? [String: Any])
                let items = try #require(page["items"] as? [[String: Any]])
                let answer = try client.request("GET", "/api/\(view)/sections?\(parameters)")
                #expect(answer.status == 200, "\(view): \(answer.text)")
                let sections = try #require((answer.json as? [String: Any])?["sections"] as? [[String: Any]], "\(view)")
                #expect(sections.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == items.count, "\(view)")
                for section in sections {
                    let first = try #require(section["firstIndex"] as? Int)
                    #expect(items[first]["section"] as? String == section["name"] as? String, "\(view) \(section)")
                }
            }
            #expect(try client.request("GET", "/api/albums/sections?after=x").status == 400)
            #expect(try Curl(base: server.base).request("GET", "/api/albums/sections").status == 401)
        }
    }

    /// What the policy forbids is not in the tree: no inline script, no style attributes, no
    /// inline event handlers, nothing loaded from elsewhere.
    @Test func theFilesNeedNothingThePolicyForbids() throws {
        let html = try String(contentsOf: Self.files.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(!html.contains("<script>"))
        #expect(html.components(separatedBy: "<script").count - 1 == html.components(separatedBy: "<script type=\"module\" src=\"app/").count - 1)
        // Every link of the page is relative, so it works at a base path (`base-path`) as at the root.
        #expect(!html.contains("=\"/"), "an absolute link in index.html")
        #expect(!html.contains(" style="))
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
        #expect(!html.contains("http://") && !html.contains("https://"))
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.files.path) where name.hasSuffix(".js") {
            let script = try String(contentsOf: Self.files.appendingPathComponent(name), encoding: .utf8)
            #expect(!script.contains("eval("), "\(name)")
            #expect(!script.contains("innerHTML"), "\(name): innerHTML")
            #expect(!script.contains("setAttribute('style'"), "\(name)")
        }
    }

    /// The page's words live in the two tables (i18n-en.js, i18n-ja.js), never in the code: both
    /// tables have the same keys and placeholders, every key the code names is in them, every
    /// text and labelling attribute of index.html is marked for translation (or as data), and no
    /// script assigns a literal word to what the page shows. The browser suite adds the Japanese
    /// walk (no untranslated word on any view).
    @Test func thePageTextComesFromTheTables() throws {
        func table(_ name: String) throws -> [String: String] {
            let text = try String(contentsOf: Self.files.appendingPathComponent(name), encoding: .utf8)
            var entries: [String: String] = [:]
            for match in text.matches(of: #/\n  '([^']+)': '((?:[^'\\]|\\.)*)',/#) { entries[String(match.1)] = String(match.2) }
            return entries
        }
        let en = try table("i18n-en.js")
        let ja = try table("i18n-ja.js")
        #expect(en.count > 400, "\(en.count) English entries")
        #expect(
            Set(en.keys) == Set(ja.keys),
            "only English: \(Set(en.keys).subtracting(ja.keys).sorted()); only Japanese: \(Set(ja.keys).subtracting(en.keys).sorted())")
        func placeholders(_ text: String) -> Set<String> { Set(text.matches(of: #/\{[a-zA-Z]+\}/#).map { String($0.0) }) }
        for (key, text) in en {
            guard var theirs = ja[key].map(placeholders) else { continue }
            var ours = placeholders(text)
            // English may say "Edit track" for one where Japanese says "1曲を編集": a singular form
            // may leave the count out.
            if key.hasSuffix(".one") {
                ours.remove("{count}")
                theirs.remove("{count}")
            }
            if ours != theirs { Issue.record("\(key): the placeholders differ between the tables") }
        }
        let scripts = try FileManager.default.contentsOfDirectory(atPath: Self.files.path).filter {
            $0.hasSuffix(".js") && !$0.hasPrefix("i18n") && $0 != "sw.js"
        }
        #expect(scripts.count >= 15)
        for name in scripts {
            let script = try String(contentsOf: Self.files.appendingPathComponent(name), encoding: .utf8)
            for match in script.matches(of: #/\bt\('([a-zA-Z0-9_.]+)'/#) where en[String(match.1)] == nil {
                Issue.record("\(name) uses '\(match.1)', which is not in the tables")
            }
            for match in script.matches(of: #/\btn\('([a-zA-Z0-9_.]+)'/#) where en["\(match.1).one"] == nil || en["\(match.1).other"] == nil {
                Issue.record("\(name) counts with '\(match.1)', whose .one and .other are not both in the tables")
            }
            // A literal word put where the page shows it (or names a control) is text outside the tables.
            let literal =
                #/(?:textContent|innerText|title|placeholder|ariaLabel|alt)\s*=\s*['"`][^'"`]*[A-Za-z]{3,}|setAttribute\('(?:aria-label|title|placeholder|alt)',\s*['"`][^'"`]*[A-Za-z]{3,}|\btext:\s*['"`][^'"`]*[A-Za-z]{3,}|(?:alert|confirm|prompt)\(\s*['"`]/#
            let lines = script.split(separator: "\n", omittingEmptySubsequences: false)
            for match in script.matches(of: literal) {
                // Library data spliced into a template is not a word of the page; a language's own
                // name in the language list is marked translate="no" on purpose.
                if match.0.contains("`${") { continue }
                let line = lines[script[..<match.range.lowerBound].filter { $0 == "\n" }.count]
                if line.contains("translate: 'no'") { continue }
                Issue.record("\(name): a literal word shown: \(match.0)")
            }
        }
        let html = try String(contentsOf: Self.files.appendingPathComponent("index.html"), encoding: .utf8)
        for match in html.matches(of: #/<(\w+)([^>]*)>([^<]*[A-Za-z]{2,}[^<]*)</#) {
            let (tag, attributes) = (String(match.1), String(match.2))
            if tag == "title" || tag == "script" || attributes.contains("translate=\"no\"") { continue }
            if !attributes.contains("data-i18n=") { Issue.record("index.html: <\(tag)\(attributes)> shows '\(match.3)' without data-i18n") }
        }
        for match in html.matches(of: #/<(\w+)([^>]*)>/#) {
            let attributes = String(match.2)
            for name in ["aria-label", "placeholder", "title", "alt"] where attributes.contains(" \(name)=\"") {
                guard let value = attributes.firstMatch(of: try Regex(" \(name)=\"([^\"]*)\""))?.output[1].substring, value.contains(where: \.isLetter) else {
                    continue
                }
                if !attributes.contains("data-i18n-\(name)=") { Issue.record("index.html: \(name)=\"\(value)\" without data-i18n-\(name)") }
            }
        }
        for match in html.matches(of: #/data-i18n(?:-[a-z-]+)?="([^"]+)"/#) where en[String(match.1)] == nil {
            Issue.record("index.html names '\(match.1)', which is not in the tables")
        }
    }

    // MARK: In a real browser

    /// The venv's Python when Selenium is installed and Debian's Chromium and its driver are
    /// present; nil (the browser tests are skipped, saying so) otherwise.
    static func browserPython() -> URL? {
        let python = repository.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
            (try? ChildProcess.run(python, ["-c", "import selenium"]).status) == 0
        else {
            print("WebPageTests: no Selenium in .venv or no chromium/chromium-driver (run make subsonic-client and make deps); the browser suite is skipped")
            return nil
        }
        return python
    }

    /// Where screenshots go: `.build/web-artifacts` (gitignored), kept after the run.
    static let artifacts = repository.appendingPathComponent(".build/web-artifacts")

    static func runSuite(_ suite: String, python: URL, server: ServerProcess, library: String, importDir: String? = nil) throws -> ProcessResult {
        let script = repository.appendingPathComponent("Tests/web_page_test.py")
        let arguments =
            [script.path, suite, server.base, "ann", ServedLibrary.annPassword, library, ServedLibrary.shelfBinary().path, artifacts.path]
            + (importDir.map { [$0] } ?? [])
        var environment = ["SE_AVOID_STATS": "true", "SE_OFFLINE": "true"]
        environment["SHELF_WEB_ONLY"] = ProcessInfo.processInfo.environment["SHELF_WEB_ONLY"]
        return try ChildProcess.run(python, arguments, environment: environment)
    }
}
