import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// Schema 15 tells names apart by identity, which gives some groups a new ID. A store written
/// before keeps its stars and artist pictures on the groups they meant, and its change tokens
/// learn the groups again.
@Suite struct IdentityMigrationTests {
    @Test func starsAndPicturesFollowTheGroupsWhoseIDsChanged() async throws {
        let dir = try TemporaryDirectory()
        let tracks = [
            Track(path: "/m/1.flac", title: "Help!", artist: "The Beatles", album: "Help!"),
            Track(path: "/m/2.flac", title: "Hikari", artist: "ヒカル", album: "alb-ヒカル"),
            Track(path: "/m/3.flac", title: "Hikari 2", artist: "ヒカル", album: "alb-ヒカル"),
            Track(path: "/m/4.flac", title: "Hoshi", artist: "ほし", album: "空"),
            Track(path: "/m/5.flac", title: "Hoshi 2", artist: "ホシ", album: "空"),
        ]
        func oldID(_ kind: GroupKind, _ key: GroupKey) -> GroupID { key.beforeIdentity.id }
        func artistKey(_ name: String) -> GroupKey { GroupKey(kind: .albumArtist, key: SortKey.textKey(name)) }
        func albumKey(_ owner: String, _ album: String) -> GroupKey {
            GroupKey(kind: .album, key: SortKey.textKey(owner), album: SortKey.textKey(album))
        }
        // Before: one group for ヒカル's name and ひかる's, one for "The Beatles" and "Beatles".
        let beatles = artistKey("The Beatles")
        let hikaru = artistKey("ヒカル")
        let hikaruAlbum = albumKey("ヒカル", "alb-ヒカル")
        let hoshi = artistKey("ほし")
        #expect(beatles.id != beatles.beforeIdentity.id && hikaru.id != hikaru.beforeIdentity.id)
        #expect(hoshi.id == hoshi.beforeIdentity.id, "a name that folding leaves whole keeps its ID")

        let user: UserID
        do {
            let library = Library(directory: dir.url)
            user = try await library.addUser(name: "ann", password: "pw-ann-123456").id
            let picture = try await library.write { batch in
                for track in tracks { _ = try batch.insert(track) }
                return try batch.addArtwork(try TestPictures.jpeg(width: 64, height: 64, seed: 1))
            }
            try await library.write { batch in
                try batch.setGroupsStarred([beatles.beforeIdentity.id, hikaru.beforeIdentity.id, hoshi.id], kind: .albumArtist, by: user, true)
                try batch.setGroupsStarred([hikaruAlbum.beforeIdentity.id], kind: .album, by: user, true)
            }
            // As schema 14 wrote them: the old IDs, the version, and no table a later schema added.
            let db = try Connection(path: library.storeURL.path)
            try db.execute(
                "INSERT INTO artist_picture (album_artist_id, artist_id, name, artwork_id, path, stamp) VALUES (?, ?, 'ヒカル', ?, '/m/artist.jpg', 'x')",
                [hikaru.beforeIdentity.id.rawValue, hikaru.beforeIdentity.id.rawValue, picture.rawValue])
            try db.execute("DROP TABLE track_lyrics")
            try db.execute("PRAGMA user_version = 14")
        }
        try? FileManager.default.removeItem(at: dir.url.appendingPathComponent("mirror.sqlite"))

        let library = Library(directory: dir.url)
        let stars = Set(try await library.starredGroups(of: user, kind: .albumArtist).map(\.id))
        #expect(stars == [beatles.id, hikaru.id, hoshi.id], "the stars on The Beatles and ヒカル moved; ほし's stayed")
        #expect(Set(try await library.starredGroups(of: user, kind: .album).map(\.id)) == [hikaruAlbum.id])
        // ほし and ホシ are two artists now; the star stays with the name whose ID it had.
        #expect(artistKey("ホシ").id != hoshi.id)
        #expect(try await library.artistPictures([hikaru.id], kind: .albumArtist)[hikaru.id] != nil)
        #expect(try await library.artistPictures([hikaru.id], kind: .artist)[hikaru.id] != nil)
        #expect(try await library.groupLogStart() >= 1, "tokens from before learn the groups again")
        // The views agree with the IDs the stars moved to.
        #expect(try await library.group(beatles.id, kind: .albumArtist)?.name == "The Beatles")
        #expect(try await library.group(hikaruAlbum.id, kind: .album)?.trackCount == 2)
        #expect(try await library.group(hoshi.id, kind: .albumArtist)?.trackCount == 1)
    }
}
