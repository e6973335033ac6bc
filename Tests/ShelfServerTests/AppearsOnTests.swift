import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// "Appears on": the albums of others an artist is credited on are reachable from the artist
/// (the engine's `appearances`, `/api/artists/{id}/albums?role=appears`, and getArtist for an
/// artist who is never an album artist, which answered error 70).
@Suite struct AppearsOnTests {
    @Test func anArtistReachesTheAlbumsItIsCreditedOn() async throws {
        let served = try await InProcessServer(tracks: 5)
        let library = served.library
        try await library.write { batch in
            var duet = Track(path: "/a/duets/1.mp3", title: "Together", artist: "Zeta; Eta", album: "Duets", albumArtist: "Zeta", year: 2001)
            duet.details.artists = ["Zeta", "Eta"]
            try batch.insert(duet)
            try batch.insert(Track(path: "/a/duets/2.mp3", title: "Alone", artist: "Zeta", album: "Duets", albumArtist: "Zeta", year: 2001))
            try batch.insert(Track(path: "/a/eta/1.mp3", title: "Mine", artist: "Eta", album: "Eta Alone", albumArtist: "Eta", year: 1999))
            try batch.insert(Track(path: "/a/guest/1.mp3", title: "Feature", artist: "Kay", album: "Guests", albumArtist: "Zeta", year: 1990))
        }
        try await library.waitForMirror()
        let eta = Library.artistID(named: "Eta")
        let kay = Library.artistID(named: "Kay")
        #expect(try await library.appearances(of: eta).map(\.name) == ["Duets"])
        #expect(try await library.appearances(of: kay).map(\.name) == ["Guests"])
        #expect(try await library.appearances(of: Library.artistID(named: "Zeta")).isEmpty, "Zeta owns both albums")

        // /api/: the artist's own albums by default, the others' with role=appears.
        let ann = try #require(try await library.user(named: "ann"))
        let (_, key) = try await library.createAPIKey(for: ann.id)
        func names(_ id: GroupID, _ role: String?) async throws -> [String] {
            let answer = await served.request(
                "GET", "/api/artists/\(id.rawValue)/albums", query: role.map { [("role", $0)] } ?? [], headers: ["authorization": "Bearer \(key)"])
            let document = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any], "\(answer.text)")
            return (document["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        #expect(try await names(eta, nil) == ["Eta Alone"])
        #expect(try await names(eta, "appears") == ["Duets"])
        #expect(
            (await served.request("GET", "/api/artists/\(eta.rawValue)/albums", query: [("role", "x")], headers: ["authorization": "Bearer \(key)"])).status
                == 400)

        // getArtist of a track-only artist: its appearances, where it was error 70.
        let artist = try #require(try await served.subsonicJSON("getArtist", [("id", "ar-\(kay.rawValue)")])["artist"] as? [String: Any])
        #expect(artist["name"] as? String == "Kay" && artist["albumCount"] as? Int == 1, "\(artist)")
        #expect((artist["album"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Guests"])
    }
}
