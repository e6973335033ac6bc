import Foundation
import ShelfTestSupport
import Testing

/// What the page's player, admin and settings views call beyond the track lists: the Subsonic API
/// through the page's own session, API keys, signing out elsewhere, the loudness job, a scan,
/// and the service worker with its file list.
@Suite(.serialized) struct WebPageAPITests {
    static let write = ["X-Shelf-Request": "1"]

    /// The `subsonic-response` of a form POST to `/rest/NAME` with the session cookie.
    static func subsonic(_ client: Curl, _ name: String, _ form: String = "", headers: [String: String] = write) throws -> [String: Any] {
        let body = Data(("f=json&c=test" + (form.isEmpty ? "" : "&" + form)).utf8)
        let answer = try client.request(
            "POST", "/rest/\(name)", headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { a, _ in a }, body: body)
        return try #require((answer.json as? [String: Any])?["subsonic-response"] as? [String: Any], "\(name): \(answer.text)")
    }

    static func errorCode(_ response: [String: Any]) -> Int? { (response["error"] as? [String: Any])?["code"] as? Int }

    @Test func thePageSessionCallsTheSubsonicAPIWithItsHeader() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 3)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let ping = try Self.subsonic(ann, "ping")
            #expect(ping["status"] as? String == "ok", "\(ping)")
            // A save and a read of the play queue: the device's name is the client's.
            let ids = try #require((ann.request("GET", "/api/tracks?limit=3").json as? [String: Any])?["items"] as? [[String: Any]]).compactMap {
                $0["id"] as? Int
            }
            try #require(ids.count == 3)
            let saved = try Self.subsonic(
                ann, "savePlayQueue", ids.map { "id=tr-\($0)" }.joined(separator: "&") + "&current=tr-\(ids[1])&position=4200", headers: Self.write)
            #expect(saved["status"] as? String == "ok", "\(saved)")
            let queue = try #require(try Self.subsonic(ann, "getPlayQueue")["playQueue"] as? [String: Any])
            #expect(queue["current"] as? String == "tr-\(ids[1])")
            #expect(queue["position"] as? Int == 4200)
            #expect(queue["changedBy"] as? String == "test")
            #expect((queue["entry"] as? [[String: Any]])?.count == 3)
            // Without the anti-forgery header the cookie is not enough (Subsonic reads change state
            // by GET too), and the answer names the header.
            let forged = try Self.subsonic(ann, "ping", headers: [:])
            #expect(Self.errorCode(forged) == 10, "\(forged)")
            let message = (forged["error"] as? [String: Any])?["message"] as? String
            #expect(message?.contains("x-shelf-request") == true, "\(forged)")
            // The user's role still rules: a non-admin cannot list users.
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            #expect(Self.errorCode(try Self.subsonic(bob, "getUsers")) == 50)
            #expect((try Self.subsonic(ann, "getUsers")["users"] as? [String: Any]) != nil)
            // Signed out, the cookie no longer opens the API.
            #expect(try ann.request("DELETE", "/api/session", headers: Self.write).status == 200)
            let after = try Self.subsonic(ann, "ping")
            #expect(Self.errorCode(after) == 10 || Self.errorCode(after) == 40, "\(after)")
        }
    }

    @Test func apiKeysAreShownOnceListedByIDAndRevoked() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            let created = try ann.request("POST", "/api/users/bob/keys", headers: Self.write)
            #expect(created.status == 201, "\(created.text)")
            let document = try #require(created.json as? [String: Any])
            let key = try #require(document["key"] as? String)
            let id = try #require((document["info"] as? [String: Any])?["id"] as? String)
            // The key signs in to both APIs; the list names it by ID only.
            let keyed = Curl(base: server.base)
            #expect(try keyed.request("GET", "/api/me", headers: ["Authorization": "Bearer \(key)"]).status == 200)
            let listed = try bob.request("GET", "/api/users/bob/keys")
            #expect(listed.status == 200)
            #expect(!listed.text.contains(key))
            #expect(((listed.json as? [String: Any])?["keys"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
            // Bob may not see or revoke Ann's keys, nor learn whether an ID exists.
            #expect(try bob.request("GET", "/api/users/ann/keys").status == 403)
            let annKey = try #require((try ann.request("POST", "/api/users/ann/keys", headers: Self.write).json as? [String: Any])?["info"] as? [String: Any])
            #expect(try bob.request("DELETE", "/api/keys/\(annKey["id"] as? String ?? "")", headers: Self.write).status == 404)
            #expect(try bob.request("DELETE", "/api/keys/nothing", headers: Self.write).status == 404)
            #expect(try ann.request("GET", "/api/users/nobody/keys").status == 404)
            // Bob revokes his own; the key stops working.
            #expect(try bob.request("DELETE", "/api/keys/\(id)", headers: Self.write).status == 200)
            #expect(try keyed.request("GET", "/api/me", headers: ["Authorization": "Bearer \(key)"]).status == 401)
            #expect(try bob.request("POST", "/api/users/bob/keys").status == 403)  // no anti-forgery header
        }
    }

    @Test func signingOutEverywhereElseKeepsThisSession() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let phone = try signedIn(server)
            let laptop = try signedIn(server)
            let here = try signedIn(server)
            #expect((try here.request("GET", "/api/me/sessions").json as? [String: Any])?["sessions"] as? Int == 3)
            let ended = try here.request("DELETE", "/api/me/sessions/others", headers: Self.write)
            #expect((ended.json as? [String: Any])?["ended"] as? Int == 2, "\(ended.text)")
            #expect(try here.request("GET", "/api/me").status == 200)
            #expect(try phone.request("GET", "/api/me").status == 401)
            #expect(try laptop.request("GET", "/api/me").status == 401)
            #expect((try here.request("GET", "/api/me/sessions").json as? [String: Any])?["sessions"] as? Int == 1)
        }
    }

    /// `/api/memory` tells an admin where the server's memory is: the caches it names and their
    /// caps, and they move when used.
    @Test func memoryNamesTheCachesAndTheirCaps() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = try signedIn(server)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            #expect(try bob.request("GET", "/api/memory").status == 403)
            let before = try #require(try ann.request("GET", "/api/memory").json as? [String: Any])
            #expect(before["databaseCacheLimit"] as? Int == 32 << 20, "shelf serve caps SQLite: \(before)")
            #expect((before["databaseCache"] as? Int ?? 0) > 0, "\(before)")
            // A sanitizer's allocator (`make asan`, `make tsan`) replaces glibc's, whose figures are then zero.
            let glibc = ProcessInfo.processInfo.environment["SHELF_SANITIZER"] == nil
            #expect((before["heapInUse"] as? Int ?? 0) > 0 || !glibc, "\(before)")
            #expect(before["heapFree"] is Int, "\(before)")
            let resident = before["resident"] as? Int ?? 0
            #expect(resident > (before["residentPrivate"] as? Int ?? .max) && (before["residentPrivate"] as? Int ?? 0) > 0, "\(before)")
            #expect(before["artworkCache"] as? Int == 0 && before["subsonicListIDs"] as? Int == 0, "\(before)")
            let artworkID = try #require((try ann.request("GET", "/api/tracks/1").json as? [String: Any])?["artworkID"] as? String)
            #expect(try ann.request("GET", "/api/artwork/\(artworkID)?size=64").status == 200)
            let after = try #require(try ann.request("GET", "/api/memory").json as? [String: Any])
            #expect((after["artworkCache"] as? Int ?? 0) > 0, "\(after)")
        }
    }

    @Test func theLoudnessJobAndAScanStartFromThePage() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library, arguments: ["--music", fixture.music])
            defer { server.stop() }
            let ann = try signedIn(server)
            let bob = try signedIn(server, "bob", ServedLibrary.bobPassword)
            #expect(try bob.request("GET", "/api/loudness").status == 403)
            let before = try #require(try ann.request("GET", "/api/loudness").json as? [String: Any])
            #expect(before["enabled"] as? Bool == false)
            #expect(before["withoutGain"] as? Int == 2, "\(before)")
            #expect(try ann.request("POST", "/api/loudness", headers: Self.write).status == 202)
            // The one-off run measures both tracks; its totals show when it is done.
            var status: [String: Any] = [:]
            for _ in 0..<600 {
                status = try #require(try ann.request("GET", "/api/loudness").json as? [String: Any])
                if status["running"] as? Bool == false, status["last"] is [String: Any] { break }
                Thread.sleep(forTimeInterval: 0.1)  // polling for the run's end, which the status shows
            }
            #expect((status["last"] as? [String: Any])?["measured"] as? Int == 2, "\(status)")
            // The sample files are shorter than a 400 ms gating block: measured, but with no gain to give.
            #expect(status["withoutGain"] as? Int == 2, "\(status)")
            // A scan of the configured folders.
            let scan = try ann.request("POST", "/api/import", headers: Self.write, body: Curl.json(["scan": true]))
            #expect(scan.status == 202, "\(scan.text)")
            #expect(try ann.request("POST", "/api/import", headers: Self.write, body: Curl.json(["scan": true, "paths": ["/tmp"]])).status == 400)
            #expect(try bob.request("POST", "/api/import", headers: Self.write, body: Curl.json(["scan": true])).status == 403)
        }
    }

    @Test func theServiceWorkerListsTheShellAndChangesWithIt() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let client = Curl(base: server.base)
            let worker = try client.request("GET", "/sw.js")
            #expect(worker.status == 200)
            #expect(worker.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(!worker.text.contains("__SHELF_"))
            for name in ["'/'", "'/app/app.js'", "'/app/index.html'", "'/app/manifest.webmanifest'"] { #expect(worker.text.contains(name), "\(name)") }
            #expect(!worker.text.contains("'/app/sw.js'"))
            let files = try #require(worker.text.firstMatch(of: #/const FILES = \[([^\]]*)\]/#)).1
            #expect(!files.contains("/api/") && !files.contains("/rest/"), "\(files)")
            let manifest = try client.request("GET", "/app/manifest.webmanifest")
            #expect(manifest.headers["content-type"] == "application/manifest+json; charset=utf-8")
            // Relative to the manifest (/app/…), so the page installs the same under a base path.
            let fields = manifest.json as? [String: Any]
            #expect(fields?["start_url"] as? String == "../" && fields?["scope"] as? String == "../")
            #expect(((fields?["icons"] as? [[String: Any]])?.first?["src"] as? String) == "icon.svg")
        }
    }
}
