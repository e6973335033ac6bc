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
        let various = SortKey.variousArtistsID
        let songs = try await library.write { batch in
            var songs: [TrackID] = []
            for (number, id, album) in [(1, composer, "Greatest Hits"), (2, composer, "Star Wars"), (3, guitarist, "Greatest Hits")] {
                var track = Track(path: "/jw/\(number).flac", title: "Song \(number)", artist: "John Williams", album: album, year: 1977 + number)
                track.details.musicBrainz.artistIDs = [id]
                songs.append(try batch.insert(track))
            }
            // A duet credited by a list whose IDs line up with its names, with the guitarist as its performer.
            var duet = Track(path: "/jw/4.flac", title: "Duet", artist: "John Williams & Kay", album: "Duets", year: 1990)
            duet.details.artists = ["John Williams", "Kay"]
            duet.details.musicBrainz.artistIDs = [guitarist, "c0ffee00-0000-4000-8000-00000000000a"]
            duet.details.contributors = [Contributor(role: "performer", subRole: "guitar", name: "John Williams")]
            songs.append(try batch.insert(duet))
            // Picard's compilations: album artist "Various Artists" with MusicBrainz's Various Artists ID,
            // flagged as a compilation or not; both file under the one "Various Artists".
            for (number, flagged) in [(5, true), (6, false)] {
                var track = Track(
                    path: "/va/\(number).flac", title: "Hit \(number)", artist: "Kay", album: "Hits \(number)", albumArtist: "Various Artists",
                    compilation: flagged)
                track.details.musicBrainz.albumArtistIDs = [various]
                songs.append(try batch.insert(track))
            }
            return songs
        }
        try await library.waitForMirror()
        let first = Library.artistID(named: "John Williams", musicBrainzID: composer)
        let second = Library.artistID(named: "John Williams", musicBrainzID: guitarist)
        #expect(first != second && first != Library.artistID(named: "John Williams"))

        let index = try #require(try await served.subsonicJSON("getArtists")["artists"] as? [String: Any])
        let listed = ((index["index"] as? [[String: Any]]) ?? []).flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }
        let williams = listed.filter { $0["name"] as? String == "John Williams" }
        #expect(Set(williams.compactMap { $0["id"] as? String }) == ["ar-\(first.rawValue)", "ar-\(second.rawValue)"], "\(listed)")
        let variousArtists = listed.filter { $0["name"] as? String == "Various Artists" }
        #expect(variousArtists.map { $0["id"] as? String } == ["ar-\(Library.artistID(named: "Various Artists").rawValue)"], "\(listed)")
        #expect(variousArtists.first?["albumCount"] as? Int == 2, "\(listed)")
        func albums(of id: GroupID, musicBrainzId: String) async throws -> [String: String] {
            let artist = try #require(try await served.subsonicJSON("getArtist", [("id", "ar-\(id.rawValue)")])["artist"] as? [String: Any])
            #expect(artist["musicBrainzId"] as? String == musicBrainzId)
            return Dictionary(((artist["album"] as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0["id"] as? String ?? "") }) { a, _ in a }
        }
        let composers = try await albums(of: first, musicBrainzId: composer)
        let guitarists = try await albums(of: second, musicBrainzId: guitarist)
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
        // The duet's credit goes to the guitarist, who appears on it, and so does its performer credit.
        #expect(try await library.appearances(of: second).map(\.name) == ["Duets"])
        let duet = try #require(try await served.subsonicJSON("getSong", [("id", "tr-\(songs[3].rawValue)")])["song"] as? [String: Any])
        let performers = ((duet["contributors"] as? [[String: Any]]) ?? []).compactMap { ($0["artist"] as? [String: Any])?["id"] as? String }
        #expect(performers == ["ar-\(second.rawValue)"], "\(duet)")
        // A compilation's album artist leads to the one "Various Artists".
        let hit = try #require(try await served.subsonicJSON("getSong", [("id", "tr-\(songs[4].rawValue)")])["song"] as? [String: Any])
        let owners = ((hit["albumArtists"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(owners == ["ar-\(Library.artistID(named: "Various Artists").rawValue)"], "\(hit)")

        // getTopSongs by ID: the artist's played songs, not its namesake's.
        for song in [songs[0], songs[1], songs[2]] {
            #expect(try await served.subsonicJSON("scrobble", [("id", "tr-\(song.rawValue)"), ("submission", "true")])["status"] as? String == "ok")
        }
        for (artist, expected) in [(first, [songs[0], songs[1]]), (second, [songs[2]])] {
            let top = try #require(try await served.subsonicJSON("getTopSongs", [("id", "ar-\(artist.rawValue)")])["topSongs"] as? [String: Any])
            let ids = ((top["song"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
            #expect(Set(ids) == Set(expected.map { "tr-\($0.rawValue)" }), "\(ids)")
        }

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
