import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

/// `shelf serve` killed with SIGKILL in the middle of a write it was asked for over HTTP: before
/// the store's COMMIT (an edit batch, a playlist change, a user's star) nothing of it remains;
/// between the store's COMMIT and the mirror's, the store keeps it and the mirror catches up on
/// the next open. The store passes `integrity_check` every time.
@Suite struct ServePowerCutTests {
    static let write = ["X-Shelf-Request": "1"]

    /// What the library answers, read with the `shelf` command after the server is gone.
    static func state(_ fixture: ServedLibrary) throws -> [String] {
        try [
            ["tracks", "--limit", "100", "--json"], ["playlist", "list", "--json"], ["user", "list", "--json"], ["token"],
        ].map { arguments in
            let result = try fixture.shelf(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
    }

    @Test(arguments: ["edit", "playlist", "star", "user", "import", "mirror"])
    func killedDuringARequestedWrite(kind: String) async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 4)
            defer { fixture.remove() }
            let arm = fixture.root.appendingPathComponent("armed")
            let point = kind == "mirror" ? "before-mirror-commit@1" : "before-commit@1"
            let server = try ServerProcess(
                library: fixture.library, environment: ["SHELF_CRASH_POINT": point, "SHELF_CRASH_ARM": arm.path])
            defer { server.stop(signal: SIGKILL) }
            let ann = try signedIn(server)
            let more = fixture.root.appendingPathComponent("more")
            if kind == "import" {
                // Other audio than the library's (another length), so that it is new music.
                let written = try ChildProcess.run(
                    ChildProcess.productsDirectory().appendingPathComponent("shelf-bench"),
                    ["sample-files", "--tracks", "5", "--tagged", "--seconds", "0.4", "--dir", more.path])
                #expect(written.status == 0, "\(written.stderr)")
            }
            let before = try Self.state(fixture)

            // Armed only now: the sign-in's own write is not the one to cut.
            #expect(FileManager.default.createFile(atPath: arm.path, contents: Data()))
            let (method, path, body): (String, String, Data?) =
                switch kind {
                case "edit", "mirror": ("POST", "/api/edit", Curl.json(["ids": [1, 2], "set": ["title": "Cut \(kind)"]]))
                case "playlist": ("POST", "/api/playlists", Curl.json(["name": "Never made"]))
                case "user":
                    // Through the OpenSubsonic API with the page's session, as the admin view adds users.
                    ("POST", "/rest/createUser?f=json&c=test&username=carol&password=third-password&email=", nil)
                case "import": ("POST", "/api/import", Curl.json(["paths": [more.path]]))
                default: ("PUT", "/api/tracks/1/star", nil)
                }
            let answered = Locked<HTTPResult?>(nil)
            let cookieClient = ann
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                answered.withLock { $0 = try? cookieClient.request(method, path, headers: Self.write, body: body) }
                done.signal()
            }
            // The server halts itself at the point and says so: the kill lands exactly there.
            #expect(server.waitForLine { $0.hasPrefix("crash-point ") } != nil, "\(kind): \(server.log)")
            server.stop(signal: SIGKILL)
            done.wait()
            // An import is answered (202) before its job writes; every other request is cut unanswered.
            if kind != "import" {
                #expect(answered.withLock { $0?.status } != 200, "\(kind): the request was answered as if it had committed")
            }

            let store = try Connection(path: fixture.library + "/library.sqlite", mode: .readOnly)
            #expect(try store.integrityCheck().isEmpty)
            let after = try Self.state(fixture)
            if kind == "mirror" {
                // Committed in the store before the cut: kept, and the mirror catches up to it.
                #expect(after[0].contains("Cut mirror"))
                #expect(after[3] != before[3])
                let status = try #require(try fixture.json(["mirror", "status"]) as? [String: Any])
                #expect(status["state"] as? String == "ready")
                let fromMirror = try fixture.shelf(["tracks", "--sort", "title", "--json"]).stdout
                #expect(try fixture.shelf(["mirror", "disable"]).status == 0)
                #expect(try fixture.shelf(["tracks", "--sort", "title", "--json"]).stdout == fromMirror)
            } else if kind == "import" {
                // The job's first write was cut: no track of it, nothing else changed either.
                let tracks = try #require(try fixture.json(["tracks", "--limit", "100"]) as? [String: Any])
                #expect(tracks["total"] as? Int == 4, "\(tracks["total"] ?? "?") tracks after an import cut before its first COMMIT")
                #expect(after[1...2] == before[1...2])
                let resumed = try fixture.shelf(["import", more.path])
                #expect(resumed.status == 0, "\(resumed.stderr)")
                #expect((try fixture.json(["tracks", "--limit", "100"]) as? [String: Any])?["total"] as? Int == 9)
            } else {
                // The token too: a star is logged like any write, so an unchanged position means
                // no transaction of it committed.
                #expect(after == before, "\(kind): a write cut before its COMMIT left a trace")
            }
        }
    }
}
