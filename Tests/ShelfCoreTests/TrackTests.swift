import Foundation
import Testing

@testable import ShelfCore

@Suite struct TrackTests {
    static func sample() -> Track {
        Track(
            id: 42, path: "/music/a.flac", fileSize: 1234, fileModified: Date(timeIntervalSince1970: 1_000),
            title: "Title", artist: "Artist", album: "Album", albumArtist: "AA", composer: "C", genre: "Rock",
            year: 1999, trackNumber: 3, trackCount: 12, discNumber: 1, discCount: 2, duration: 215.5,
            bitrate: 900, sampleRate: 44_100, channels: 2, codec: "FLAC", compilation: true, comment: "c",
            lyrics: "la", sortTitle: "T", sortArtist: "A", sortAlbum: "B", sortAlbumArtist: "D", sortComposer: "E",
            artworkID: ArtworkID(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!),
            dateAdded: Date(timeIntervalSince1970: 2_000), dateModified: Date(timeIntervalSince1970: 3_000),
            playCount: 5, skipCount: 1, lastPlayed: Date(timeIntervalSince1970: 4_000), rating: 80, audioHash: "abc")
    }

    @Test func jsonUsesThePublicPropertyNamesAndIncludesHasArtwork() throws {
        let data = try JSONEncoder().encode(Self.sample())
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let expected: Set<String> = [
            "id", "path", "fileSize", "fileModified", "title", "artist", "album", "albumArtist", "composer", "genre",
            "year", "trackNumber", "trackCount", "discNumber", "discCount", "duration", "bitrate", "sampleRate",
            "channels", "codec", "compilation", "comment", "lyrics", "sortTitle", "sortArtist", "sortAlbum",
            "sortAlbumArtist", "sortComposer", "artworkID", "hasArtwork", "dateAdded", "dateModified", "playCount",
            "skipCount", "lastPlayed", "rating", "audioHash",
        ]
        #expect(Set(object.keys) == expected)
        #expect(object["hasArtwork"] as? Bool == true)
        #expect(object["id"] as? Int == 42)
        #expect(object["artworkID"] as? String == "00000000-0000-0000-0000-000000000001")
    }

    @Test func absentValuesAreNullNotMissing() throws {
        let data = try JSONEncoder().encode(Track(path: "/x.mp3"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["title"] is NSNull)
        #expect(object["hasArtwork"] as? Bool == false)
    }

    @Test func jsonRoundTrips() throws {
        let track = Self.sample()
        let decoded = try JSONDecoder().decode(Track.self, from: try JSONEncoder().encode(track))
        #expect(decoded == track)
    }

    @Test func everySortFieldNamesATrackProperty() throws {
        #expect(SortField.allCases.count == 19)
        let data = try JSONEncoder().encode(Self.sample())
        let keys = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]).keys
        for field in SortField.allCases {
            #expect(keys.contains(field.rawValue), "sort field \(field.rawValue) is not a Track property")
            #expect(field.tieBreakChain.first == field)
        }
    }

    @Test func changedGroupsClassifyEachProperty() {
        let old = Self.sample()
        var new = old
        #expect(new.changedGroups(from: old).isEmpty)
        new.playCount += 1
        #expect(new.changedGroups(from: old) == .playStats)
        new.rating = 100
        new.title = "Other"
        #expect(new.changedGroups(from: old) == [.playStats, .metadata])
        new = old
        new.artworkID = nil
        #expect(new.changedGroups(from: old) == .artwork)
        new = old
        new.path = "/moved.flac"
        new.sortComposer = nil
        #expect(new.changedGroups(from: old) == [.file, .metadata])
        new = old
        new.dateModified = Date()
        #expect(new.changedGroups(from: old).isEmpty)  // the store owns dateModified
    }

    @Test func propertyGroupsEncodeAsNames() throws {
        let groups: PropertyGroups = [.metadata, .playStats]
        let data = try JSONEncoder().encode(groups)
        #expect(String(decoding: data, as: UTF8.self) == #"["metadata","playStats"]"#)
        #expect(try JSONDecoder().decode(PropertyGroups.self, from: data) == groups)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PropertyGroups.self, from: Data(#"["nope"]"#.utf8)) }
    }
}

@Suite struct SortKeyTests {
    @Test func blankMeansNilEmptyOrOnlyWhitespace() {
        for blank in [nil, "", " ", "\u{3000}", "\t\n", "\u{00A0}", " \u{3000} "] as [String?] {
            #expect(SortKey.isBlank(blank), "\(String(describing: blank)) should be blank")
            #expect(SortKey.text(blank) == .missing)
        }
        #expect(!SortKey.isBlank(" a "))
    }

    @Test func blankSortTagFallsBackToDisplayValue() {
        #expect(SortKey.text("The Beatles", sortTag: "\u{3000}", useSortTags: true) == SortKey.text("The Beatles"))
        #expect(SortKey.text("The Beatles", sortTag: "Beatles, The", useSortTags: true) == SortKey.text("Beatles, The"))
        #expect(SortKey.text("The Beatles", sortTag: "Beatles, The", useSortTags: false) == SortKey.text("The Beatles"))
    }

    @Test func foldsCaseDiacriticsAndWidth() {
        #expect(SortKey.text("Beyoncé") == SortKey.text("beyonce"))
        #expect(SortKey.text("ＢＥＹＯＮＣＥ") == SortKey.text("beyonce"))
    }

    @Test func missingSortsAfterEveryValue() {
        #expect(SortComponent.text("zzz") < .missing)
        #expect(SortComponent.number(1e300) < .missing)
    }
}
