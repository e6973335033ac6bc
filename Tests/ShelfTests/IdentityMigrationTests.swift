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

    /// Schema 17: an album's key ends with its MusicBrainz release ID, so two releases of one name
    /// are two albums. A star on the album they were is kept by the release holding most of its
    /// tracks; an album without release IDs keeps its ID and its star.
    @Test func starsFollowAlbumsToldApartByRelease() async throws {
        let dir = try TemporaryDirectory()
        let first = "0b6c5e2a-8f4e-4a55-9a56-6a0f7d4b1c01"
        let second = "7f0d3c9e-2b1a-4e8f-b5d6-3c2a1f0e9d02"
        func track(_ number: Int, _ album: String, _ release: String?) -> Track {
            var track = Track(path: "/m/\(number).flac", title: "Song \(number)", artist: "Kay", album: album)
            track.trackNumber = number
            track.details.musicBrainz.releaseID = release
            return track
        }
        let tracks = [
            track(1, "Greatest Hits", first), track(2, "Greatest Hits", first), track(3, "Greatest Hits", first.uppercased()),
            track(4, "Greatest Hits", second), track(5, "Greatest Hits", second), track(6, "Solo", nil), track(7, "Solo", "not a UUID"),
        ]
        func albumKey(_ album: String, _ release: String?) -> GroupKey {
            GroupKey(kind: .album, key: SortKey.textKey("Kay"), album: SortKey.withRelease(SortKey.textKey(album), release))
        }
        let hitsFirst = albumKey("Greatest Hits", first)
        let hitsSecond = albumKey("Greatest Hits", second)
        let solo = albumKey("Solo", nil)
        #expect(hitsFirst.id != hitsSecond.id && hitsFirst.withoutRelease.id == hitsSecond.withoutRelease.id)
        #expect(hitsFirst.id == albumKey("Greatest Hits", " \(first.uppercased())").id, "a release ID is one however it is cased")
        #expect(solo.id == albumKey("Solo", "not a UUID").id, "a value that is no UUID is no release")
        #expect(SortKey.body(ofKey: hitsFirst.album!) == SortKey.textKey("Greatest Hits"), "sorting and search see the name alone")

        let user: UserID
        do {
            let library = Library(directory: dir.url)
            user = try await library.addUser(name: "ann", password: "pw-ann-123456").id
            try await library.write { batch in for track in tracks { _ = try batch.insert(track) } }
            try await library.write { batch in
                try batch.setGroupsStarred([hitsFirst.withoutRelease.id, solo.id], kind: .album, by: user, true)
            }
            // As schema 16 wrote them: one album of that name, under the ID it had then.
            try Connection(path: library.storeURL.path).execute("PRAGMA user_version = 16")
        }
        try? FileManager.default.removeItem(at: dir.url.appendingPathComponent("mirror.sqlite"))

        let library = Library(directory: dir.url)
        #expect(Set(try await library.starredGroups(of: user, kind: .album).map(\.id)) == [hitsFirst.id, solo.id])
        #expect(try await library.group(hitsFirst.id, kind: .album)?.trackCount == 3)
        #expect(try await library.group(hitsSecond.id, kind: .album)?.trackCount == 2)
        #expect(try await library.group(solo.id, kind: .album)?.trackCount == 2)
        #expect(try await library.groupLogStart() >= 1, "tokens from before learn the albums again")
        // The mirror and the direct path agree on the albums and on the order of their tracks.
        let mirrored = try await library.groups(GroupQuery(kind: .album), offset: 0).items.map(\.id)
        let sorted = try await library.snapshot(LibraryQuery(sort: .album))
        try await library.disableMirror()
        #expect(try await library.groups(GroupQuery(kind: .album), offset: 0).items.map(\.id) == mirrored)
        #expect(try await library.snapshot(LibraryQuery(sort: .album)) == sorted)
        #expect(Set(mirrored) == [hitsFirst.id, hitsSecond.id, solo.id])
        // Sorted by album, each release's tracks stay together.
        let releases = try await library.tracks(ids: sorted).tracks.map { $0.details.musicBrainz.releaseID.flatMap(UUID.init(uuidString:)) }
        #expect(releases.indices.dropFirst().filter { releases[$0] != releases[$0 - 1] }.count == 2, "\(releases)")
    }

    /// Schema 18: an artist's key ends with its MusicBrainz artist ID, so two artists of one name
    /// ("John Williams" the composer and the guitarist) are two artists, and their albums of one
    /// name two albums. A star on the artist they were is kept by the one holding most of its
    /// tracks; so is a star on their album; a name without IDs keeps its ID and its star.
    @Test func starsFollowArtistsToldApartByMusicBrainzID() async throws {
        let dir = try TemporaryDirectory()
        let composer = "53b106e7-0cc6-42cc-ac95-ed8d30a3a98e"
        let guitarist = "2f0c9a6e-4a8b-4d55-8f3e-1b7c5d9e0a11"
        func track(_ number: Int, _ artist: String, _ album: String, _ id: String?) -> Track {
            var track = Track(path: "/m/\(number).flac", title: "Song \(number)", artist: artist, album: album)
            track.trackNumber = number
            track.details.musicBrainz.artistIDs = id.map { [$0] } ?? []
            return track
        }
        var duet = track(6, "John Williams feat. Kay", "Duets", nil)
        duet.details.artists = ["John Williams", "Kay"]
        duet.details.musicBrainz.artistIDs = [guitarist.uppercased(), "not a UUID"]
        let tracks = [
            track(1, "John Williams", "Greatest Hits", composer), track(2, "John Williams", "Greatest Hits", composer),
            track(3, "John Williams", "Star Wars", composer), track(4, "John Williams", "Greatest Hits", guitarist),
            track(5, "Kay", "Solo", nil), duet,
        ]
        func artistKey(_ name: String, _ id: String?) -> GroupKey { GroupKey(kind: .artist, key: SortKey.withArtistID(SortKey.textKey(name), id)) }
        func albumKey(_ owner: GroupKey, _ album: String) -> GroupKey { GroupKey(kind: .album, key: owner.key, album: SortKey.textKey(album)) }
        let first = artistKey("John Williams", composer)
        let second = artistKey("John Williams", guitarist)
        let kay = artistKey("Kay", nil)
        let hitsFirst = albumKey(first, "Greatest Hits")
        let hitsSecond = albumKey(second, "Greatest Hits")
        #expect(first.id != second.id && first.withoutArtistID.id == second.withoutArtistID.id)
        #expect(hitsFirst.id != hitsSecond.id && hitsFirst.withoutArtistID.id == hitsSecond.withoutArtistID.id)
        #expect(first.id == artistKey("John Williams", " \(composer.uppercased())").id, "an artist ID is one however it is cased")
        #expect(kay.id == artistKey("Kay", "not a UUID").id, "a value that is no UUID is no artist ID")
        #expect(SortKey.body(ofKey: first.key) == SortKey.textKey("John Williams"), "sorting and search see the name alone")

        let user: UserID
        do {
            let library = Library(directory: dir.url)
            user = try await library.addUser(name: "ann", password: "pw-ann-123456").id
            try await library.write { batch in for track in tracks { _ = try batch.insert(track) } }
            try await library.write { batch in
                try batch.setGroupsStarred([first.withoutArtistID.id, kay.id], kind: .artist, by: user, true)
                try batch.setGroupsStarred([hitsFirst.withoutArtistID.id], kind: .album, by: user, true)
            }
            // As schema 17 wrote them: one artist and one album of each name, under the IDs they had then.
            try Connection(path: library.storeURL.path).execute("PRAGMA user_version = 17")
        }
        try? FileManager.default.removeItem(at: dir.url.appendingPathComponent("mirror.sqlite"))

        let library = Library(directory: dir.url)
        #expect(Set(try await library.starredGroups(of: user, kind: .artist).map(\.id)) == [first.id, kay.id])
        #expect(Set(try await library.starredGroups(of: user, kind: .album).map(\.id)) == [hitsFirst.id])
        #expect(try await library.group(first.id, kind: .artist)?.trackCount == 3)
        #expect(try await library.group(second.id, kind: .artist)?.trackCount == 2, "the duet's credit carries the guitarist's ID")
        #expect(try await library.group(kay.id, kind: .artist)?.trackCount == 2)
        #expect(try await library.group(hitsSecond.id, kind: .album)?.trackCount == 1)
        #expect(try await library.groupLogStart() >= 1, "tokens from before learn the artists again")
        // The mirror and the direct path agree on the artists, the albums and the order by artist.
        let artists = try await library.groups(GroupQuery(kind: .artist), offset: 0).items.map(\.id)
        let albums = try await library.groups(GroupQuery(kind: .album), offset: 0).items.map(\.id)
        let sorted = try await library.snapshot(LibraryQuery(sort: .artist))
        let appearances = try await library.appearances(of: second.id).map(\.name)
        try await library.disableMirror()
        #expect(try await library.groups(GroupQuery(kind: .artist), offset: 0).items.map(\.id) == artists)
        #expect(try await library.groups(GroupQuery(kind: .album), offset: 0).items.map(\.id) == albums)
        #expect(try await library.snapshot(LibraryQuery(sort: .artist)) == sorted)
        #expect(Set(artists) == [first.id, second.id, kay.id], "the duet is credited to its list's names")
        #expect(appearances == ["Duets"], "the guitarist appears on the duet's album: \(appearances)")
        // Sorted by artist, each John Williams's tracks stay together.
        let ids = try await library.tracks(ids: sorted).tracks.map { $0.details.displayArtistID.flatMap(UUID.init(uuidString:)) }
        #expect(ids.indices.dropFirst().filter { ids[$0] != ids[$0 - 1] }.count == 2, "\(ids)")
    }
}
