import Foundation
import Shelf
import ShelfCore
import Testing

@testable import ShelfServer

/// The OpenSubsonic system and browsing sections, and the native API's sign-in and errors, each
/// behaviour its own test over one shared in-process fixture (no socket, no child process).
@Suite struct InProcessAPITests {
    /// One library for the whole suite: made once, read by every test (none of them writes).
    static let fixture = Task { try await InProcessServer(tracks: 60) }
    func served() async throws -> InProcessServer { try await Self.fixture.value }

    @Test func pingAnswersOkWithTheVersions() async throws {
        let response = try await served().subsonicJSON("ping")
        #expect(response["status"] as? String == "ok")
        #expect(response["version"] as? String == "1.16.1")
        #expect(response["openSubsonic"] as? Bool == true)
        #expect(response["serverVersion"] as? String == EngineVersions.version)
    }

    @Test func aWrongPasswordIsError40() async throws {
        let served = try await served()
        let answer = await served.request(
            "GET", "/rest/ping", query: [("u", "ann"), ("p", "wrong"), ("v", "1.16.1"), ("c", "tests"), ("f", "json")])
        let response = try #require(try answer.json()["subsonic-response"] as? [String: Any])
        #expect(response["status"] as? String == "failed")
        #expect((response["error"] as? [String: Any])?["code"] as? Int == 40)
    }

    @Test func theExtensionsIncludeShelfsOwn() async throws {
        let response = try await served().subsonicJSON("getOpenSubsonicExtensions")
        let names = (response["openSubsonicExtensions"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(names.contains("shelfSync") && names.contains("shelfAlphabetIndex"), "\(names)")
    }

    @Test func anUnknownSongIsError70() async throws {
        let response = try await served().subsonicJSON("getSong", [("id", "tr-999999")])
        #expect((response["error"] as? [String: Any])?["code"] as? Int == 70)
    }

    @Test func aSongReadsAsTheLibraryHasIt() async throws {
        let served = try await served()
        let track = try #require(try await served.library.track(TrackID(1)))
        let response = try await served.subsonicJSON("getSong", [("id", "tr-1")])
        let song = try #require(response["song"] as? [String: Any])
        #expect(song["title"] as? String == track.title)
        #expect(song["duration"] as? Int == track.duration.map { $0 > 0 ? max(1, Int($0.rounded())) : 0 })
    }

    @Test func albumListsPageAlphabetically() async throws {
        let response = try await served().subsonicJSON("getAlbumList2", [("type", "alphabeticalByName"), ("size", "4")])
        let albums = try #require((response["albumList2"] as? [String: Any])?["album"] as? [[String: Any]])
        #expect(albums.count == 4)
        let names = albums.compactMap { $0["name"] as? String }
        #expect(names.count == 4)
    }

    @Test func aUserWhoIsNotAnAdminCannotCreateUsers() async throws {
        let response = try await served().subsonicJSON("createUser", [("username", "eve"), ("password", "x"), ("email", "e@x")], user: "bob")
        #expect((response["error"] as? [String: Any])?["code"] as? Int == 50)
    }

    @Test func theNativeAPIWantsASignIn() async throws {
        let answer = try await served().request("GET", "/api/tracks")
        #expect(answer.status == 401)
    }

    /// An engine error reaches the client by its kind: an unknown track is a 404 `trackNotFound`.
    @Test func anUnknownTrackIs404ByItsKind() async throws {
        let served = try await served()
        let signIn = await served.request(
            "POST", "/api/session", headers: ["content-type": "application/json"],
            body: Data(#"{"name":"ann","password":"ann's secret"}"#.utf8))
        #expect(signIn.status == 200 || signIn.status == 201, "\(signIn.text)")
        let cookie = try #require(signIn.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let answer = await served.request("GET", "/api/tracks/999999", headers: ["cookie": cookie])
        #expect(answer.status == 404, "\(answer.text)")
        #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == "trackNotFound")
    }
}
