import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// A playlist's comment is kept and returned (a playlist tool finds its playlist by a tag in the
/// comment; it made a new one on every run while the comment was dropped).
@Suite struct PlaylistCommentTests {
    @Test func theCommentIsStoredAndReturnedOnBothAPIs() async throws {
        let served = try await InProcessServer(tracks: 10)
        let created = try await served.subsonicJSON("createPlaylist", [("name", "Synced"), ("comment", "#tool:7"), ("songId", "tr-1")])
        let playlist = try #require(created["playlist"] as? [String: Any], "\(created)")
        #expect(playlist["comment"] as? String == "#tool:7")
        let id = try #require(playlist["id"] as? String)
        func listed() async throws -> [String: Any]? {
            let all = try await served.subsonicJSON("getPlaylists")
            let items = (all["playlists"] as? [String: Any])?["playlist"] as? [[String: Any]] ?? []
            return items.first { $0["id"] as? String == id }
        }
        #expect(try await listed()?["comment"] as? String == "#tool:7")
        // The same answer in XML.
        let xml = await served.subsonic("getPlaylist", [("id", id)], format: "xml")
        #expect(xml.text.contains("comment=\"#tool:7\""), "\(xml.text)")

        _ = try await served.subsonicJSON("updatePlaylist", [("playlistId", id), ("comment", "#tool:8")])
        let one = try await served.subsonicJSON("getPlaylist", [("id", id)])
        #expect((one["playlist"] as? [String: Any])?["comment"] as? String == "#tool:8")
        // A name change leaves the comment; an empty comment clears it.
        _ = try await served.subsonicJSON("updatePlaylist", [("playlistId", id), ("name", "Renamed")])
        #expect(try await listed()?["comment"] as? String == "#tool:8")
        _ = try await served.subsonicJSON("updatePlaylist", [("playlistId", id), ("comment", "")])
        #expect(try await listed()?["comment"] == nil)

        // /api/: set by the page's action, listed with the playlist.
        let ann = try #require(try await served.library.user(named: "ann"))
        let (_, key) = try await served.library.createAPIKey(for: ann.id)
        let number = try #require(Int(id.dropFirst("pl-".count)))
        let set = await served.request(
            "POST", "/api/playlists/\(number)/comment", headers: ["authorization": "Bearer \(key)", "content-type": "application/json"],
            body: Data(#"{"comment":"from the page"}"#.utf8))
        #expect(set.status == 200, "\(set.text)")
        let lists = await served.request("GET", "/api/playlists", headers: ["authorization": "Bearer \(key)"])
        let document = try #require(try JSONSerialization.jsonObject(with: lists.body) as? [String: Any])
        let entry = (document["playlists"] as? [[String: Any]])?.first { $0["id"] as? Int == number }
        #expect(entry?["comment"] as? String == "from the page", "\(lists.text)")
        #expect(try await listed()?["comment"] as? String == "from the page")
        // Too long a comment is refused with the reason, and the stored one stays.
        let long = try await served.subsonicJSON("updatePlaylist", [("playlistId", id), ("comment", String(repeating: "x", count: 4_001))])
        #expect(long["status"] as? String == "failed", "\(long)")
        #expect(try await listed()?["comment"] as? String == "from the page")
    }
}
