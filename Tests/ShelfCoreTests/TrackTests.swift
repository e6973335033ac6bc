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
            "skipCount", "lastPlayed", "rating", "audioHash", "missing", "missingSince", "cue",
            // The details, beside the others.
            "artists", "albumArtists", "genres", "composers", "moods", "contributors", "musicBrainz", "replayGain",
            "originalDate", "releaseDate", "releaseTypes", "releaseStatus", "labels", "catalogNumbers", "barcode", "isrcs",
            "bpm", "discSubtitle", "media", "releaseCountry", "albumVersion", "bitDepth",
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
    func key(_ value: String?) -> [UInt8] { SortKey.textKey(value) }
    func section(_ value: String?) -> String { SortKey.section(ofKey: key(value)) }

    @Test func blankMeansNilEmptyOrOnlyWhitespace() {
        for blank in [nil, "", " ", "\u{3000}", "\t\n", "\u{00A0}", " \u{3000} "] as [String?] {
            #expect(SortKey.isBlank(blank), "\(String(describing: blank)) should be blank")
            #expect(key(blank) == SortKey.missingKey)
        }
        #expect(!SortKey.isBlank(" a "))
    }

    @Test func blankSortTagFallsBackToDisplayValue() {
        #expect(SortKey.textKey("The Beatles", sortTag: "\u{3000}", useSortTags: true) == key("The Beatles"))
        #expect(SortKey.textKey("The Beatles", sortTag: "Beatles, The", useSortTags: true) == key("Beatles, The"))
        #expect(SortKey.textKey("Zed", sortTag: "Beatles, The", useSortTags: false) == key("Zed"))
    }

    func body(_ value: String?) -> [UInt8] { SortKey.body(ofKey: key(value)) }

    @Test func foldsCaseDiacriticsWidthAndKana() {
        #expect(body("Beyoncé") == body("beyonce"))
        #expect(body("ＢＥＹＯＮＣＥ") == body("beyonce"))
        #expect(body("ヒカル") == body("ひかる"))
        #expect(body("ﾋｶﾙ") == body("ひかる"))
        #expect(body("ガ") == body("か"))
        #expect(key("  padded ") == key("padded"))
    }

    /// Folding sorts and searches; identity is what tells names apart: only case, width,
    /// normalisation and spaces fold, and names that differ otherwise sort next to each other.
    @Test func keysKeepWhatTellsNamesApart() {
        #expect(key("ＢＥＹＯＮＣＥ") == key("beyonce"))
        #expect(key("HIKARU") == key("hikaru"))
        #expect(key("ﾋｶﾙ") == key("ヒカル"))
        #expect(key("Cafe\u{301}") == key("Café"))
        #expect(key(" ひかる\u{3000}") == key("ひかる"))
        for (a, b) in [("ヒカル", "ひかる"), ("びかる", "ひかる"), ("ガ", "か"), ("Beyoncé", "Beyonce"), ("The Beatles", "Beatles"), ("Track 02", "Track 2")] {
            #expect(key(a) != key(b), "\(a) and \(b)")
            // A name without a tail is the plain key, what it was before names had identity.
            #expect(key(b) == body(b), "\(b)")
            #expect(key(a).starts(with: body(b) + [SortKey.identitySeparator]), "\(a) sorts right after \(b)")
        }
        // Every key of a name that folds alike lies in the body's range, and no other key does.
        let range = SortKey.bodyRange("ひかる")
        for name in ["ひかる", "ヒカル", "びかる", "ﾋｶﾙ"] {
            #expect(!key(name).lexicographicallyPrecedes(range.lower) && key(name).lexicographicallyPrecedes(range.upper), "\(name)")
        }
        for name in ["ひかる 2", "ひかるこ", "ひかり"] {
            #expect(key(name).lexicographicallyPrecedes(range.lower) || !key(name).lexicographicallyPrecedes(range.upper), "\(name)")
        }
    }

    @Test func numbersCompareAsNumbers() {
        #expect(key("Track 2").lexicographicallyPrecedes(key("Track 10")))
        #expect(key("Track 9").lexicographicallyPrecedes(key("Track 10")))
        #expect(body("Track 02") == body("Track 2"))
        #expect(key("Track 02").lexicographicallyPrecedes(key("Track 10")))
        #expect(key("Track 10").lexicographicallyPrecedes(key("Track 10b")))
        #expect(key("1999").lexicographicallyPrecedes(key("2001")))
    }

    @Test func articlesAreSkippedAsASetting() {
        #expect(body("The Beatles") == body("Beatles"))
        #expect(body("A Tribe Called Quest") == body("Tribe Called Quest"))
        #expect(key("The") == key("the"))  // nothing left: not stripped
        #expect(section("The Beatles") == "B")
        #expect(SortKey.textKey("The Beatles", options: .none) != key("Beatles"))
        let french = SortKeyOptions(articles: SortKeyOptions.french)
        #expect(SortKey.body(ofKey: SortKey.textKey("L'Impératrice", options: french)) == SortKey.textKey("Imperatrice", options: french))
        let keep = SortKeyOptions(exceptions: ["the the"])
        #expect(SortKey.textKey("The The", options: keep) != SortKey.textKey("The", options: keep))
    }

    @Test func sectionsComeFromTheKey() {
        #expect(section("Beatles, The") == "B")
        #expect(section("beyoncé") == "B")
        #expect(section("うただ") == "あ")
        #expect(section("宇多田ヒカル") == "#")
        #expect(SortKey.section(ofKey: SortKey.textKey("宇多田ヒカル", sortTag: "うただひかる", useSortTags: true)) == "あ")
        #expect(section("ガガ") == "か")
        #expect(section("ゆず") == "や")
        #expect(section("わたなべ") == "わ")
        #expect(section("808 State") == "#")
        #expect(section("Кино") == "#")
        #expect(section(nil) == "#")
        #expect(section("ｚｚ") == "Z")
    }

    @Test func everySectionIsContiguousInKeyOrder() {
        let values = [
            "Abba", "the beatles", "Zed", "あいう", "かきく", "ガンダム", "ゆず", "わをん", "808", "!!!", "Кино", "방탄",
            "宇多田", nil, "", "Ólafur", "ｚｚ", "さくら", "らりるれろ", "はひふ", "まみむ", "なにぬ", "たちつ",
        ]
        let sorted = values.map { key($0) }.sorted { $0.lexicographicallyPrecedes($1) }
        let sections = sorted.map { SortKey.section(ofKey: $0) }
        var seen: [String] = []
        for name in sections where seen.last != name {
            #expect(!seen.contains(name), "section \(name) is split")
            seen.append(name)
        }
        #expect(seen == seen.sorted { SortKey.sectionNames.firstIndex(of: $0)! < SortKey.sectionNames.firstIndex(of: $1)! })
        #expect(seen.last == "#")
        for name in SortKey.sectionNames {
            let range = SortKey.byteRange(ofSection: name)!
            #expect(SortKey.section(ofByte: range.lowerBound) == name)
        }
    }

    @Test func missingSortsAfterEveryValue() {
        #expect(SortComponent.bytes(key("zzz")) < .bytes(SortKey.missingKey))
        #expect(SortComponent.bytes(key("宇多田")) < .bytes(SortKey.missingKey))
        #expect(SortComponent.number(1e15) < .number(SortKey.missingNumber))
    }

    /// ASCII text takes a byte-level fast path for keys, folds and search tokens; it must give
    /// exactly what the scalar path gives, or the mirror's keys and tokens would drift.
    @Test func asciiFastPathAgreesWithTheScalarPath() {
        let pieces = [
            "The ", "the", "A ", "an ", "l'", "L'Amour", "Don't", "rock'n'roll", "'quoted'", "x'", "007", "0", "Track 2",
            "10", "  ", "\t", "\n", "\r\n", "\u{0B}", "\u{01}", "\u{1F}", "\u{7F}", "-", "_", "^", "`", "~", "Ab", "ZZ",
            "zz9", "(Live)", "&", "#1", ".", "'", "' ", "a'b",
        ]
        let optionSets = [
            SortKeyOptions(), SortKeyOptions(articles: SortKeyOptions.french), .none,
            SortKeyOptions(articles: SortKeyOptions.english, exceptions: ["the the"]),
        ]
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        var texts = ["The The", "the", "a", "The  Beatles", " \t the\nend ", "l'", "l' amour"]
        for _ in 0..<3_000 { texts.append((0..<(1 + next(6))).map { _ in pieces[next(pieces.count)] }.joined()) }
        for text in texts {
            let scalars = SortKey.foldedScalars(text)
            #expect(SortKey.asciiFolded(text) == scalars.map { UInt8($0.value) }, "fold of \(text.debugDescription)")
            #expect(Filter.fold(text) == String(String.UnicodeScalarView(scalars)), "filter fold of \(text.debugDescription)")
            #expect(SearchText.tokens(text) == SearchText.scalarTokens(scalars), "tokens of \(text.debugDescription)")
            for options in optionSets {
                let slow = SortKey.isBlank(text) ? SortKey.missingKey : SortKey.key(ofFolded: scalars, options: options)
                let fast = SortKey.textKey(text, options: options)
                #expect(SortKey.body(ofKey: fast) == slow, "key of \(text.debugDescription)")
                // The identity tail, when there is one, is the name's identity text.
                if fast.count > slow.count {
                    #expect(Array(fast[(slow.count + 1)...]) == Array(String(String.UnicodeScalarView(SortKey.identityScalars(text))).utf8))
                }
            }
        }
    }
}
