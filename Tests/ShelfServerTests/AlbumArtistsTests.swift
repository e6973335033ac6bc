import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// An album credited to several album artists (the tags' album-artist list) is listed, and
/// counted, under each of them: in the album-artist view, an artist's albums, getArtists and
/// getArtist; through the mirror and the direct path; and it follows edits of the list.
@Suite struct AlbumArtistsTests {
    @Test func anAlbumOfSeveralAlbumArtistsIsListedUnderEach() async throws {
        let served = try await InProcessServer(tracks: 3)
        let library = served.library
        let duets = try await library.write { batch in
            var first = Track(path: "/a/duets/1.mp3", title: "Together", artist: "Zeta", album: "Duets", albumArtist: "Zeta", year: 2001)
            first.details.albumArtists = ["Zeta", "Eta"]
            let one = try batch.insert(first)
            var second = Track(path: "/a/duets/2.mp3", title: "Again", artist: "Eta", album: "Duets", albumArtist: "Zeta", year: 2001)
            second.details.albumArtists = ["Zeta", "Eta"]
            let two = try batch.insert(second)
            try batch.insert(Track(path: "/a/eta/1.mp3", title: "Mine", artist: "Eta", album: "Eta Alone", albumArtist: "Eta", year: 1999))
            // Picard's joined credit beside the list: listed under each named artist, not the joined one.
            var joined = Track(path: "/a/kl/1.mp3", title: "Pair", artist: "Kay", album: "Joined", albumArtist: "Kay & Lee", year: 2010)
            joined.details.albumArtists = ["Kay", "Lee"]
            try batch.insert(joined)
            return [one, two]
        }
        let zeta = Library.artistID(named: "Zeta")
        let eta = Library.artistID(named: "Eta")
        let kay = Library.artistID(named: "Kay")
        let lee = Library.artistID(named: "Lee")

        func expectViews(_ path: String) async throws {
            let artists = try await library.groups(ids: [zeta, eta, kay, lee, Library.artistID(named: "Kay & Lee")], kind: .albumArtist)
            let byName = Dictionary(artists.map { ($0.name, ($0.albumCount, $0.trackCount)) }, uniquingKeysWith: { a, _ in a })
            #expect(byName["Zeta"]?.0 == 1 && byName["Zeta"]?.1 == 2, "\(path): \(byName)")
            #expect(byName["Eta"]?.0 == 2 && byName["Eta"]?.1 == 3, "\(path): \(byName)")
            #expect(byName["Kay"]?.0 == 1 && byName["Lee"]?.0 == 1, "\(path): \(byName)")
            #expect(byName["Kay & Lee"] == nil, "\(path): the joined credit is not an album artist")
            for (artist, names) in [(eta, ["Duets", "Eta Alone"]), (zeta, ["Duets"]), (lee, ["Joined"])] {
                let albums = try await library.groups(GroupQuery(kind: .album, artist: artist), limit: 10)
                #expect(albums.items.map(\.name).sorted() == names, "\(path)")
                #expect(albums.total == names.count, "\(path)")
                let sections = try await library.groupSections(GroupQuery(kind: .album, artist: artist))
                #expect(sections.reduce(0) { $0 + $1.count } == names.count, "\(path)")
            }
            #expect(try await library.appearances(of: eta).isEmpty, "\(path): Duets is Eta's own album")
        }
        try await library.waitForMirror()
        try await expectViews("mirror")
        try await library.disableMirror()
        try await expectViews("direct")
        try await library.enableMirror()
        try await library.waitForMirror()

        // Subsonic: getArtists counts Duets under both; getArtist lists it under Eta; the album names its owner.
        let index = try #require(try await served.subsonicJSON("getArtists")["artists"] as? [String: Any])
        let listed = ((index["index"] as? [[String: Any]]) ?? []).flatMap { ($0["artist"] as? [[String: Any]]) ?? [] }
        #expect(listed.first { $0["name"] as? String == "Eta" }?["albumCount"] as? Int == 2, "\(listed)")
        #expect(!listed.contains { $0["name"] as? String == "Kay & Lee" })
        let artist = try #require(try await served.subsonicJSON("getArtist", [("id", "ar-\(eta.rawValue)")])["artist"] as? [String: Any])
        #expect(artist["albumCount"] as? Int == 2)
        #expect(((artist["album"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted() == ["Duets", "Eta Alone"])

        // Eta leaves Duets' list: the mirror's sync takes Duets from Eta's albums.
        try await library.write { batch in
            for id in duets { _ = try batch.updateTrack(id) { $0.details.albumArtists = ["Zeta"] } }
        }
        try await library.waitForMirror()
        let after = try await library.groups(GroupQuery(kind: .album, artist: eta), limit: 10)
        #expect(after.items.map(\.name) == ["Eta Alone"])
        #expect(try await library.group(eta, kind: .albumArtist)?.albumCount == 1)
    }
}
