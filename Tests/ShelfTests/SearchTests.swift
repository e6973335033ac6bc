import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite(.serialized) struct SearchTests {
    @Test func tokensFoldSplitAndKeepUnsegmentedScriptsOneCharacterEach() {
        #expect(SearchText.tokens("Beyoncé — Don't Stop!") == ["beyonce", "dont", "stop"])
        #expect(SearchText.tokens("ｈｉｋａｒｕ ＵＴＡＤＡ") == ["hikaru", "utada"])
        #expect(SearchText.tokens("宇多田ヒカル") == ["宇", "多", "田", "ひ", "か", "る"])
        #expect(SearchText.tokens("AC/DC 2000s") == ["ac", "dc", "2000s"])
        #expect(SearchText.tokens("Sigur Rós: Ágætis byrjun") == ["sigur", "ros", "agætis", "byrjun"])
        #expect(SearchText.tokens("  \u{3000}\t") == [])
        #expect(SearchText.tokens("Кино") == ["кино"])
        let query = SearchQuery("the  BEAT")
        #expect(query.words == [["the"], ["beat"]])
        #expect(query.matchExpression == "\"the\" \"beat\"*")
        #expect(SearchQuery("宇多").matchExpression == "\"宇 多\"")
        #expect(SearchQuery("?! …").isEmpty)
    }

    /// A small library whose names exercise every kind of match.
    static func caseTracks() -> [Track] {
        let specs: [(title: String, artist: String, album: String, sortTitle: String?, sortArtist: String?, genre: String)] = [
            ("Halo", "Beyoncé", "I Am... Sasha Fierce", nil, nil, "R&B"),
            ("Come Together", "The Beatles", "Abbey Road", nil, "Beatles, The", "Rock"),
            ("Beat It", "Michael Jackson", "Thriller", nil, nil, "Pop"),
            ("First Love", "宇多田ヒカル", "First Love", nil, "うただひかる", "J-Pop"),
            ("光", "宇多田ヒカル", "Deep River", "ひかり", "うただひかる", "J-Pop"),
            ("ｈｉｋａｒｕ ｎｏ ｕｔａ", "Hikaru Band", "Width", nil, nil, "Rock"),
            ("夜に駆ける", "YOASOBI", "THE BOOK", "よるにかける", nil, "J-Pop"),
            ("Hyperballad", "Björk", "Post", nil, nil, "Electronic"),
            ("Don't Stop Me Now", "Queen", "Jazz", nil, nil, "Rock"),
            ("月光", "鬼束ちひろ", "インソムニア", "げっこう", "おにつかちひろ", "J-Pop"),
        ]
        return specs.enumerated().map { index, spec in
            var track = Track(
                path: "/search/\(index).flac", title: spec.title, artist: spec.artist, album: spec.album, albumArtist: spec.artist,
                genre: spec.genre, sortTitle: spec.sortTitle, sortArtist: spec.sortArtist)
            // What the details credit is searched too: another listed artist, a contributor, a
            // label and a catalogue number.
            if spec.title == "Hyperballad" {
                track.details.artists = ["Björk", "Mark Bell"]
                track.details.contributors = [Contributor(role: "producer", name: "Nellee Hooper")]
                track.details.labels = ["One Little Indian"]
                track.details.catalogNumbers = ["TPLP51"]
            }
            return track
        }
    }

    /// Typed text and the titles it must find (in any order), on the mirror and on the direct path.
    static let cases: [(String, Set<String>)] = [
        ("beyonce", ["Halo"]),  // accents
        ("BEYONCÉ", ["Halo"]),  // case and accents
        ("bjork post", ["Hyperballad"]),  // two words, two fields
        ("hikaru", ["ｈｉｋａｒｕ ｎｏ ｕｔａ"]),  // width: full-width Latin is indexed as plain Latin
        ("ｈｉｋａｒｕ ｕｔａ", ["ｈｉｋａｒｕ ｎｏ ｕｔａ"]),  // width in the query, multi-word
        ("ひかる", ["First Love", "光"]),  // kana: hiragana finds katakana
        ("ヒカル", ["First Love", "光"]),
        ("宇多", ["First Love", "光"]),  // two characters inside a word
        ("多", ["First Love", "光"]),  // one character
        ("ひかり", ["光"]),  // a reading in the sort tag finds the kanji title
        ("よるに", ["夜に駆ける"]),
        ("駆け", ["夜に駆ける"]),
        ("げっこう", ["月光"]),
        ("光", ["光", "月光"]),
        ("beat", ["Come Together", "Beat It"]),  // prefix of the last word
        ("beatles", ["Come Together"]),
        ("beat it", ["Beat It"]),  // earlier words are whole
        ("bea it", []),
        ("dont", ["Don't Stop Me Now"]),  // apostrophes dropped
        ("don't stop", ["Don't Stop Me Now"]),
        ("the", ["Come Together", "夜に駆ける"]),  // "The Beatles", "THE BOOK"
        ("rock queen", ["Don't Stop Me Now"]),  // genre and artist
        ("zeppelin", []),  // no hit
        ("光 band", []),  // all words required
        ("!!!", []),
        ("mark bell", ["Hyperballad"]), ("hooper", ["Hyperballad"]), ("little indian", ["Hyperballad"]), ("tplp51", ["Hyperballad"]),
    ]

    @Test func searchCasesFindWhatTheyShouldOnBothPaths() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { batch in for track in Self.caseTracks() { try batch.insert(track) } }
        try await library.waitForMirror()
        #expect(try await library.mirrorStatus().state == .ready)
        let engines = try Engines(library)
        for (text, expected) in Self.cases {
            let found = try await library.search(text, limit: 100)
            #expect(Set(found.items.compactMap(\.title)) == expected, "mirror: \(text)")
            #expect(found.total == expected.count, "total: \(text)")
            let direct = try engines.direct.search(SearchQuery(text), scope: SearchScope(), after: nil, limit: 100)
            #expect(Set(direct.items.compactMap(\.title)) == expected, "direct: \(text)")
        }
        // Title and artist weigh more than the album: "first love" is the title of one track and
        // only the album of the other.
        let ranked = try await library.search("first love")
        #expect(ranked.items.map(\.title) == ["First Love"])
        // Tiered ranking (many hits): a title hit comes before an artist hit.
        let tiered = MirrorQueryEngine(db: engines.mirror, exactRankLimit: 0)
        #expect(try tiered.search(SearchQuery("beat"), scope: SearchScope(), after: nil, limit: 5).items.map(\.title) == ["Beat It", "Come Together"])
        // Scoped searches.
        let rock = try await library.search("the", scope: SearchScope(filter: .text(.genre, .equals("rock"))))
        #expect(rock.items.map(\.title) == ["Come Together"])
        let byArtist = try await library.search("光", scope: SearchScope(filter: .text(.artist, .equals("宇多田ヒカル"))))
        #expect(byArtist.items.map(\.title) == ["光"])
    }

    /// Queries made from the library's own text: word prefixes, whole words, kana and kanji runs.
    static func queries(from tracks: [Track], count: Int, random: inout SeededRandom) -> [String] {
        var queries = ["a", "the", "rock", "ひ", "の", "宇多", "zz no such", "love"]
        while queries.count < count {
            let track = random.pick(tracks)
            let text = random.pick([track.title, track.artist, track.album, track.composer, track.sortArtist].compactMap { $0 })
            let tokens = SearchText.tokens(text)
            guard !tokens.isEmpty else { continue }
            let start = random.int(0...(tokens.count - 1))
            let length = random.int(1...min(3, tokens.count - start))
            var words = Array(tokens[start..<(start + length)])
            if let last = words.last, last.count > 2, random.int(0...1) == 0 { words[words.count - 1] = String(last.prefix(last.count - 1)) }
            // Unsegmented characters typed as one run, as a user types them.
            queries.append(
                words.reduce("") { text, word in
                    text.isEmpty
                        ? word
                        : (word.unicodeScalars.allSatisfy(SearchText.isUnsegmented) && text.unicodeScalars.last.map(SearchText.isUnsegmented) == true
                            ? text + word : text + " " + word)
                })
        }
        return queries
    }

    /// The mirror's answers equal the direct path's: in tiered mode the same rows in the same
    /// order page by page; in bm25 mode the same rows, ranked by a non-decreasing score.
    static func expectSearchParity(_ engines: Engines, _ text: String, scope: SearchScope) throws {
        let query = SearchQuery(text)
        let expected = try engines.direct.searchRows(query, scope: scope).map(\.track.id)
        for limit in [0, 2_000] {
            let engine = MirrorQueryEngine(db: engines.mirror, exactRankLimit: limit)
            var walked: [TrackID] = []
            var cursor: PageCursor?
            var pages = 0
            repeat {
                let page = try engine.search(query, scope: scope, after: cursor, limit: 13)
                #expect(page.total == expected.count, "total '\(text)' \(scope)")
                walked += page.items.map(\.id)
                cursor = page.nextCursor
                if let cursor { #expect(PageCursor(cursor.description) == cursor) }
                pages += 1
            } while cursor != nil && pages < 500
            if limit == 0 || expected.count > 2_000 {
                #expect(walked == expected, "tiered '\(text)' \(scope)")
            } else {
                #expect(walked.sorted() == expected.sorted(), "bm25 '\(text)' \(scope)")
                #expect(Set(walked).count == walked.count, "no row twice '\(text)'")
            }
        }
    }

    @Test func searchAgreesWithTheDirectPathAfterRandomBatches() async throws {
        let (dir, library) = try await MirrorParityTests.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let playlist = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "Mixed"))
            try batch.insertIntoPlaylist(id, (1...60).map { TrackID(Int64($0 * 7)) }, at: 0)
            return id
        }
        var random = SeededRandom(seed: 7)
        func check() throws {
            let engines = try Engines(library)
            try Connection(path: dir.path("mirror.sqlite").path).execute("INSERT INTO mirror_search (mirror_search, rank) VALUES ('integrity-check', 1)")
            let tracks = try engines.canonical.query(TrackRow.select, [], TrackRow.decode)
            for text in Self.queries(from: tracks, count: 30, random: &random) {
                try Self.expectSearchParity(engines, text, scope: SearchScope())
            }
            // Scoped: a filter, a playlist, an artist (the artist of a random track).
            let artist = try #require(tracks.compactMap(\.artist).filter { !SortKey.isBlank($0) }.randomElement(using: &random))
            for text in ["a", "the", "ひ", "new"] {
                try Self.expectSearchParity(engines, text, scope: SearchScope(filter: .range(.year, lower: 1980, upper: 2000)))
                try Self.expectSearchParity(engines, text, scope: SearchScope(playlist: playlist))
                try Self.expectSearchParity(engines, text, scope: SearchScope(filter: .text(.artist, .equals(artist))))
            }
        }
        try check()
        for round in 0..<TestScale.rounds(6, sanitized: 2) {
            try await library.write { batch in
                var r = SeededRandom(seed: UInt64(round) + 100)
                let ids = try batch.db.query("SELECT id FROM track ORDER BY (id * ?) % 1000003 LIMIT 40", [Int64(r.int(1...999_983))]) {
                    TrackID(try $0.int64(0))
                }
                for id in ids {
                    switch r.int(0...5) {
                    case 0: try batch.deleteTrack(id)
                    case 1: try batch.updateTrack(id) { $0.title = r.pick(["New Dawn", "夜明けの歌", "Ｎｅｗ Ｗａｖｅ", "  ", nil]) }
                    case 2:
                        try batch.updateTrack(id) {
                            $0.sortTitle = r.pick([nil, "あさ", "Dawn, New"])
                            $0.artist = r.pick(["Néw Order", "宇多田"])
                        }
                    case 3:
                        try batch.updateTrack(id) {
                            $0.composer = r.pick([nil, "Bach", "坂本龍一"])
                            $0.playCount += 1
                        }
                    case 4:
                        try batch.updateTrack(id) {
                            $0.genre = r.pick(["New Age", "演歌"])
                            $0.albumArtist = r.pick([nil, "Various"])
                        }
                    default: try batch.insert(Track(path: "/new/\(r.next()).mp3", title: "New \(r.int(0...99))", artist: r.pick(["Kiki", "きき"])))
                    }
                }
            }
        }
        try check()
        // A write the mirror did not see (catch-up reads old search rows back from mirror rows).
        try await library.disableMirror()
        try await library.write { batch in
            try batch.updateTrack(TrackID(3)) {
                $0.title = "Catch Up Song"
                $0.sortArtist = "かきくけこ"
            }
            try batch.deleteTrack(TrackID(5))
        }
        try await library.enableMirror()
        try check()
        #expect(try await library.search("catch up").items.map(\.id) == [TrackID(3)])
    }
}
