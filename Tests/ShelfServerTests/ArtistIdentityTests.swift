import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// Two artists of one name told apart by their MusicBrainz artist IDs, as a client sees them:
/// getArtists lists both, getArtist gives each its own albums, an album list made from the
/// track list (newest) names each one's album by the ID getAlbum answers, and a song's
/// OpenSubsonic `artists` and `/api/artists/named` lead to the artist the ID says.
@Suite struct ArtistIdentityTests {
    @Test func twoArtistsOfOneNameAreTwoArtistsToEveryClient() async throws {
        let served = try await InProcessServer(tracks: 3)
        let library = served.library
        let composer = "53b106e7-0cc6-42cc-ac95-ed8d30a3a98e"
        let guitarist = "2f0c9a6e-4a8b-4d55-8f3e-1b7c5d9e0a11"
        try await library.write { batch in
            for (number, id, album) in [(1, composer, "Greatest Hits"), (2, composer, "Star Wars"), (3, guitarist, "Greatest Hits")] {
                var track = Track(path: "/jw/\(number).flac", title: "Song \(number)", artist: "John Williams", album: album, year: 1977 + number)
                track.details.musicBrainz.artistIDs = [id]
                try batch.insert(track)
            }
            // A duet credited by a list whose IDs line up with its names.
            var duet = Track(path: "/jw/4.flac", title: "Duet", artist: "John Williams & Kay", album: "Duets", year: 1990)
            duet.details.artists = ["John Williams", "Kay"]
            duet.details.musicBrainz.artistIDs = [guitarist, "c0ffee00-0000-4000-8000-00000000000a"]
            try batch.insert(duet)
        }
        try await library.waitForMirror()
        let first = Library.artistID(named: "John Williams", musicBrainzID: composer)
        let second = Library.artistID(named: "John Williams", musicBrainzID: guitarist)
        #expect(first != second && first != Library.artistID(named: "John Williams"))

        let index = try #require(try await served.subsonicJSON("getArtists")["artists"] as? [String: Any])
        let listed = ((index["index"] as? [[String: Any]]) ?? []).flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }
        let williams = listed.filter { $0["name"] as? String == "John Williams" }
        #expect(Set(williams.compactMap { $0["id"] as? String }) == ["ar-\(first.rawValue)", "ar-\(second.rawValue)"], "\(listed)")
        func albums(of id: GroupID) async throws -> [String: String] {
            let artist = try #require(try await served.subsonicJSON("getArtist", [("id", "ar-\(id.rawValue)")])["artist"] as? [String: Any])
            return Dictionary(((artist["album"] as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0["id"] as? String ?? "") }) { a, _ in a }
        }
        let composers = try await albums(of: first)
        let guitarists = try await albums(of: second)
        #expect(Set(composers.keys) == ["Greatest Hits", "Star Wars"] && Set(guitarists.keys) == ["Greatest Hits"])
        #expect(composers["Greatest Hits"] != guitarists["Greatest Hits"], "two albums of one name")

        // newest is made from the track list: each row's album is the one getAlbum knows.
        let newest = try #require(try await served.subsonicJSON("getAlbumList2", [("type", "newest"), ("size", "20")])["albumList2"] as? [String: Any])
        let hits = ((newest["album"] as? [[String: Any]]) ?? []).filter { $0["name"] as? String == "Greatest Hits" }.compactMap { $0["id"] as? String }
        #expect(Set(hits) == Set([composers["Greatest Hits"], guitarists["Greatest Hits"]].compactMap { $0 }), "\(hits)")
        for id in hits {
            let album = try #require(try await served.subsonicJSON("getAlbum", [("id", id)])["album"] as? [String: Any], "\(id)")
            let songs = (album["song"] as? [[String: Any]]) ?? []
            #expect(songs.count == 1)
            // The song's artists lead to the artist whose album it is.
            let refs = songs.flatMap { ($0["artists"] as? [[String: Any]]) ?? [] }.compactMap { $0["id"] as? String }
            #expect(refs == [id == composers["Greatest Hits"] ? "ar-\(first.rawValue)" : "ar-\(second.rawValue)"], "\(refs)")
        }
        // The duet's credit goes to the guitarist, who appears on it.
        #expect(try await library.appearances(of: second).map(\.name) == ["Duets"])

        let ann = try #require(try await library.user(named: "ann"))
        let (_, key) = try await library.createAPIKey(for: ann.id)
        func named(_ query: [(String, String)]) async throws -> String? {
            let answer = await served.request("GET", "/api/artists/named", query: query, headers: ["authorization": "Bearer \(key)"])
            return try answer.json()["id"].map { "\($0)" }
        }
        #expect(try await named([("name", "John Williams"), ("musicBrainzId", guitarist.uppercased())]) == "\(second.rawValue)")
        #expect(try await named([("name", "John Williams")]) == "\(Library.artistID(named: "John Williams").rawValue)")
    }
}
