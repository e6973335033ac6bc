import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// Tracks that stress the collation: blanks, whitespace-only values, sort tags on some tracks only,
/// accents, full-width Latin, kana and kanji, numbers inside titles, articles, identical titles.
func trickyTracks() -> [Track] {
    let specs: [(String?, String?, String?, String?)] = [
        ("Track 2", "The Beatles", "Beatles, The", "Abbey Road"), ("Track 10", "The Beatles", nil, "Abbey Road"),
        ("track 1", "Beyoncé", nil, "Lemonade"), ("TRACK 1", "beyonce", "   ", "Lemonade"), ("Ｔｒａｃｋ ３", "ＢＥＹＯＮＣＥ", nil, "Ｌｅｍｏｎａｄｅ"),
        ("宇多田", "宇多田ヒカル", "うただひかる", "First Love"), ("ヒカル", "ﾋｶﾙ", nil, "かな"), ("がっこう", "ガガ", "\u{3000}", nil),
        (" ", "\t", nil, ""), (nil, nil, nil, nil), ("\u{3000}", "Sigur Rós", nil, "Ágætis byrjun"), ("Same", "Same", nil, "Same"),
        ("Same", "Same", nil, "Same"), ("A Day", "A Tribe", "Tribe, A", "An Album"), ("808", "808 State", nil, "90"),
        ("Кино", "Кино", nil, "Группа крови"), ("방탄", "방탄소년단", nil, nil), ("わたし", "わたなべ", nil, "らりるれろ"),
        ("Track 2", "The\tBeatles", nil, "Abbey Road"), ("track 2", " the  beatles ", nil, "abbey road"),
    ]
    return specs.enumerated().map { index, spec in
        var track = Track(
            path: "/tricky/\(index).flac", title: spec.0, artist: spec.1, album: spec.3, albumArtist: spec.1,
            composer: index % 3 == 0 ? nil : spec.1, genre: index % 2 == 0 ? "Rock" : " ", year: index % 4 == 0 ? nil : 1990 + index,
            trackNumber: index % 5 == 0 ? nil : index, discNumber: 1, duration: index % 6 == 0 ? nil : Double(100 + index),
            sortArtist: spec.2, sortAlbumArtist: spec.2, dateAdded: Date(timeIntervalSince1970: 1_600_000_000 + Double(index % 3)),
            playCount: index % 4, rating: (index % 6) * 20)
        // Lists whose values fold like the display value, differ from it, repeat, or are blank.
        switch index % 5 {
        case 0: track.details.artists = [spec.1 ?? "", "Beyoncé", "ＢＥＹＯＮＣＥ"]
        case 1:
            track.details.genres = ["Rock", "J-Pop", " "]
            track.details.labels = ["ソニー", "Warp"]
        case 2:
            track.details.composers = ["宇多田ヒカル"]
            track.details.bpm = 120 + index
            track.details.originalDate = "1969-09-26"
        case 3:
            track.details.albumArtists = ["The Beatles", "Sigur Rós"]
            track.details.replayGain = ReplayGain(trackGain: -6.5, trackPeak: 0.9)
        default:
            track.details.musicBrainz.recordingID = "a1b2c3d4-0000-4000-8000-\(index)"
            track.details.isrcs = ["JPA\(index)"]
        }
        return track
    }
}

let parityFilters: [Filter] = [
    .all,
    .text(.genre, .equals("rock")),
    .and([.range(.year, lower: 1970, upper: 1999), .not(.flag(.compilation, true))]),
    .or([.text(.artist, .contains("the")), .missingText(.composer)]),
    .anyText("ひ"),
    .and([.range(.rating, lower: 60, upper: nil), .not(.text(.title, .prefix("a")))]),
    .text(.genre, .equals("no such genre")),
    // Equalities also compare the sort key: values differing only in case and whitespace runs.
    .or([.text(.artist, .equals("THE BEATLES")), .text(.title, .equals("track  1"))]),
    .not(.text(.album, .equals("abbey road"))),
    // Hangul folds to conjoining jamo: the mirror must compare the folded bytes, not the display's.
    .or([.text(.artist, .equals("방탄소년단")), .text(.title, .equals("방탄"))]),
    // Contains on every text field: three characters or more through the trigram index (accents,
    // width, kana and Hangul folded like the scan), shorter ones by the scan; negated too.
    .text(.title, .contains("rack")), .text(.artist, .contains("beyonce")), .text(.artist, .contains("the  b")),
    .text(.album, .contains("ｅｍｏ")), .text(.albumArtist, .contains("宇多田")), .text(.composer, .contains("ひかる")),
    .text(.genre, .contains("roc")), .text(.artist, .contains("소년단")), .text(.album, .contains("agætis")),
    .text(.title, .contains("宇多")), .text(.artist, .contains("e")), .text(.album, .contains("ab")),
    .not(.text(.artist, .contains("beat"))), .or([.text(.title, .contains("same")), .text(.album, .contains("love"))]),
    .text(.codec, .contains("fla")), .anyText("宇多田"), .not(.anyText("beyonc")), .text(.artist, .contains("no such artist")), .text(.title, .contains("\"quo")),
]

/// Filters on the lists and details (`mirror_list`); their rows are found the same way under
/// every sort, so a few sorts check them.
let listParityFilters: [Filter] = [
    // Lists: any value matches (the display credit or one of the list), negated, missing; the
    // list-only fields, the details' numbers and the ReplayGain flag.
    .text(.artist, .equals("beyonce")), .not(.text(.artist, .equals("the beatles"))), .text(.albumArtist, .equals("sigur ros")),
    .text(.genre, .equals("j-pop")), .text(.genre, .contains("pop")), .text(.composer, .prefix("宇多")), .missingText(.artist),
    .text(.label, .equals("warp")), .text(.label, .contains("ソニ")), .not(.text(.label, .equals("warp"))), .missingText(.label),
    .text(.releaseType, .equals("ep")), .text(.mood, .equals("calm")), .text(.mbid, .prefix("a1b2")), .text(.isrc, .contains("jp")),
    .range(.bpm, lower: 120, upper: 130), .range(.originalYear, lower: 1960, upper: 1969), .missingNumber(.bpm), .not(.range(.bpm, lower: 100, upper: nil)),
    .flag(.replayGain, true), .flag(.replayGain, false), .and([.flag(.replayGain, true), .text(.artist, .contains("the"))]),
    .anyText("sigur"), .text(.catalogNumber, .contains("x")),
]

/// Opens both engines over a library's files.
struct Engines {
    let canonical: Connection
    let mirror: Connection

    init(_ library: Library) throws {
        canonical = try Connection(path: library.storeURL.path, mode: .readOnly)
        mirror = try Connection(path: library.directory.appendingPathComponent("mirror.sqlite").path, mode: .readOnly)
    }

    var direct: DirectQueryEngine { DirectQueryEngine(db: canonical) }
    var mirrored: MirrorQueryEngine { MirrorQueryEngine(db: mirror) }

    /// Checks every answer of the mirror against the direct path for one query.
    func expectParity(_ query: LibraryQuery, pageSize: Int = 97) throws {
        let rows = try direct.rows(query)
        let expected = rows.map(\.track.id)
        let context = "\(query.sort.rawValue) desc=\(query.descending) tags=\(query.useSortTags) filter=\(query.filter)"
        #expect(try mirrored.snapshot(query) == expected, "snapshot \(context)")
        // Each row's section, computed once: the walk below and the section list both check against it.
        let rowSections = rows.map { SortKey.section(of: $0.key, field: query.sort) }
        var walked: [TrackID] = []
        var walkedSections: [String] = []
        var cursor: PageCursor?
        var pages = 0
        repeat {
            let page = try mirrored.page(query, after: cursor, limit: pageSize)
            #expect(page.total == expected.count, "total \(context)")
            walkedSections += page.items.map(\.section)
            walked += page.items.map(\.id)
            cursor = page.nextCursor
            if let cursor { #expect(PageCursor(cursor.description) == cursor) }
            pages += 1
        } while cursor != nil && pages < 1_000
        #expect(walked == expected, "cursor walk \(context)")
        // Every row walked has its own section (one check over the whole walk, not one per row).
        let wrongSections = zip(walkedSections, rowSections).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(wrongSections.isEmpty, "sections of rows \(wrongSections.prefix(5)) \(context)")
        // Offsets seek by section: the first row of every section, the row before it, and others.
        let starts = try mirrored.sections(query).flatMap { [$0.firstIndex, max(0, $0.firstIndex - 1), $0.firstIndex + 1] }
        for offset in [0, expected.count / 2, max(0, expected.count - 3), expected.count, expected.count + 5] + starts {
            let page = try mirrored.page(query, offset: offset, limit: 7)
            #expect(page.total == expected.count, "total at offset \(offset) \(context)")
            #expect(page.items.map(\.id) == Array(expected.dropFirst(offset).prefix(7)), "offset \(offset) \(context)")
        }
        let sections = try mirrored.sections(query)
        var expectedSections: [SectionInfo] = []
        for (index, name) in rowSections.enumerated() {
            if expectedSections.last?.name == name {
                expectedSections[expectedSections.count - 1].count += 1
            } else {
                expectedSections.append(SectionInfo(name: name, firstIndex: index, count: 1))
            }
        }
        #expect(sections == expectedSections, "sections \(context): \(sections) vs \(expectedSections)")
        for section in sections {
            let anchor = try mirrored.anchor(section.name, query)
            #expect(anchor?.index == section.firstIndex, "anchor \(section.name) \(context)")
            if let anchor {
                let fromAnchor = try mirrored.page(query, after: anchor.cursor, limit: 3).items.map(\.id)
                #expect(fromAnchor == Array(expected.dropFirst(section.firstIndex).prefix(3)), "page at anchor \(section.name) \(context)")
            }
        }
        #expect(try mirrored.anchor("Q", query)?.index == expectedSections.first { $0.name == "Q" }?.firstIndex)
        #expect(try mirrored.hasRows(query) == !expected.isEmpty, "hasRows \(context)")
    }
}

@Suite(.serialized) struct MirrorParityTests {
    static func makeLibrary() async throws -> (TemporaryDirectory, Library) {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        _ = try await DatasetGenerator(tracks: 1_200, seed: 21, tagged: true).fill(library, chunkSize: 500)
        try await library.write { batch in for track in trickyTracks() { try batch.insert(track) } }
        try await library.buildMirror(wait: true)
        #expect(try await library.mirrorStatus().state == .ready)
        return (dir, library)
    }

    /// Songs read from the mirror equal the store's cut to what a song shows, after the build and
    /// after edits of only what songs show (comment, channels, codec, picture).
    @Test func songsFromTheMirrorEqualTheStoresAfterEdits() async throws {
        let (dir, library) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }
        let ids = (1...1_250).map { TrackID(Int64($0)) }  // past the last ID: missing ones too
        func expectSameSongs(_ when: String) async throws {
            let mirrored = try await library.tracks(ids: ids, fields: .song)
            try await library.disableMirror()
            let stored = try await library.tracks(ids: ids, fields: .song)
            try await library.enableMirror()
            #expect(mirrored.tracks.count > 1_000 && mirrored.missing == stored.missing, "\(when)")
            for (a, b) in zip(mirrored.tracks, stored.tracks) where a != b { Issue.record("\(when): \(a) ≠ \(b)") }
            #expect(mirrored.tracks.count == stored.tracks.count)
        }
        try await expectSameSongs("after the build")
        try await library.write { batch in
            let picture = try batch.addArtwork(Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]))
            for n in stride(from: 1, through: 1_200, by: 97) {
                _ = try batch.updateTrack(TrackID(Int64(n))) { track in
                    track.comment = n % 2 == 0 ? "ライブ録音 \(n)" : nil
                    track.channels = n % 3 == 0 ? 6 : 2
                    track.codec = n % 5 == 0 ? "FLAC" : "Opus"
                    track.artworkID = n % 4 == 0 ? nil : picture
                    track.dateAdded = Date(timeIntervalSince1970: 1_700_000_000.75)
                }
            }
        }
        try await expectSameSongs("after edits")
    }

    @Test func everySortDirectionTagSettingAndFilterAgrees() async throws {
        let (dir, library) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let engines = try Engines(library)
        for (index, field) in TestScale.sample(SortField.allCases, stride: 5).enumerated() {
            for descending in [false, true] {
                // Both tag settings in make test-full; in make test one a direction, swapped from field to field.
                for tags in TestScale.reduced ? [descending != (index % 2 == 0)] : [false, true] {
                    // Every other filter in make test, a different half for each direction; all in make test-full.
                    for filter in TestScale.sample(descending ? Array(parityFilters.dropFirst()) : parityFilters, stride: 2) {
                        try engines.expectParity(LibraryQuery(sort: field, descending: descending, useSortTags: tags, filter: filter))
                    }
                }
            }
        }
        for field in [SortField.title, .artist, .year] {
            for descending in [false, true] {
                for filter in listParityFilters {
                    try engines.expectParity(LibraryQuery(sort: field, descending: descending, filter: filter))
                }
            }
        }
        // The oracle's own sections, anchors and hasRows agree with what the test derives above.
        let query = LibraryQuery(sort: .artist, filter: .anyText("a"))
        let direct = engines.direct
        #expect(try direct.sections(query) == (try engines.mirrored.sections(query)))
        #expect(try direct.anchor("B", query) == (try engines.mirrored.anchor("B", query)))
        #expect(try direct.hasRows(LibraryQuery(filter: .text(.genre, .equals("no such genre")))) == false)
    }

    @Test func parityHoldsAfterWritesThatMoveRowsBetweenSections() async throws {
        let (dir, library) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        var random = SeededRandom(seed: 99)
        for _ in 0..<TestScale.rounds(12, sanitized: 3) {
            let seed = random.next()
            try await library.write { batch in
                var r = SeededRandom(seed: seed)
                let ids = try batch.db.query("SELECT id FROM track ORDER BY (id * ?) % 1000003 LIMIT 30", [Int64(r.int(1...999_983))]) {
                    TrackID(try $0.int64(0))
                }
                for id in ids {
                    switch r.int(0...7) {
                    case 7:
                        try batch.updateTrack(id) { track in
                            track.details.artists = r.pick([[], ["Zebra", "Kiki"], ["Émile"]])
                            track.details.labels = r.pick([[], ["Warp"], ["4AD", "Warp"]])
                            track.details.bpm = r.pick([nil, 125])
                            track.details.replayGain = r.pick([nil, ReplayGain(trackGain: -3)])
                        }
                    case 0: try batch.deleteTrack(id)
                    case 1: try batch.updateTrack(id) { $0.artist = r.pick(["Zebra", "あいう", "The Apples", "  ", "Émile", "42"]) }
                    case 2: try batch.updateTrack(id) { $0.sortArtist = r.pick([nil, "Aardvark", "\u{3000}", "わ"]) }
                    case 3:
                        try batch.updateTrack(id) {
                            $0.title = r.pick(["Ｂｅｔａ", "alpha 10", "alpha 9", nil])
                            $0.playCount += 1
                        }
                    case 4:
                        // Two edits of one track, then one that is inserted, edited and deleted again.
                        try batch.updateTrack(id) {
                            $0.genre = r.pick(["Jazz", " ", nil])
                            $0.year = r.pick([nil, 1999])
                        }
                        try batch.updateTrack(id) {
                            $0.compilation.toggle()
                            $0.path += ".moved"
                            $0.composer = r.pick(["Bach", nil])
                        }
                        let temporary = try batch.insert(Track(path: "/new/\(r.next()).ogg", title: "Gone"))
                        try batch.updateTrack(temporary) { $0.title = "Still gone" }
                        try batch.deleteTrack(temporary)
                    case 5:
                        try batch.updateTrack(id) {
                            $0.album = r.pick(["Ａｌｂｕｍ", "the album", nil])
                            $0.sortAlbum = r.pick([nil, "Album, The"])
                        }
                        try batch.deleteTrack(id)
                    default: try batch.insert(Track(path: "/new/\(r.next()).mp3", title: "New \(r.int(0...99))", artist: r.pick(["Kiki", "きき"])))
                    }
                }
            }
        }
        // Every batch was applied before its write returned.
        let status = try await library.mirrorStatus()
        #expect(status.state == .ready)
        let engines = try Engines(library)
        let current = try engines.canonical.scalar(Int64.self, "SELECT seq FROM sqlite_sequence WHERE name = 'change_log'")
        #expect(status.appliedSeq == current)
        // Every row equals the one a build computes, and the section counts equal a recount.
        let tracks = try engines.canonical.query(TrackRow.select, [], TrackRow.decode)
        #expect(try engines.mirror.scalar(Int.self, "SELECT count(*) FROM mirror_track") == tracks.count)
        for track in tracks {
            let stored = try engines.mirror.queryOne(MirrorRow.selectAll, [track.id.rawValue]) { row in
                (0..<Int32(MirrorRow.columns.count)).map { row.value($0) }
            }
            #expect(stored == MirrorRow.values(track, options: SortKeyOptions()), "track \(track.id)")
        }
        // The list rows equal those of a build.
        var listRows = 0
        for track in tracks { listRows += MirrorLists.rows(track).count }
        #expect(try engines.mirror.scalar(Int.self, "SELECT count(*) FROM mirror_list") == listRows)
        for column in MirrorSchema.sectionColumns {
            var kept: [UInt8: Int] = [:]
            try engines.mirror.forEachRow("SELECT section, count FROM mirror_section WHERE key_column = ? AND count != 0", [column]) {
                kept[UInt8(try $0.int64(0))] = Int(try $0.int64(1))
            }
            var recounted: [UInt8: Int] = [:]
            try engines.mirror.forEachRow("SELECT \(column) FROM mirror_track") { recounted[$0.optionalData(0)?.first ?? 0xFF, default: 0] += 1 }
            #expect(kept == recounted, "\(column)")
        }
        let filters: [Filter] = [
            .all, .anyText("a"), .missingText(.artist), .text(.artist, .equals("kiki")), .text(.label, .equals("warp")),
            .range(.bpm, lower: 120, upper: 130), .flag(.replayGain, false),
        ]
        for (index, field) in [SortField.artist, .title, .albumArtist, .playCount].enumerated() {
            for descending in [false, true] {
                // Both tag settings in make test-full; in make test one a direction, swapped from field to field.
                for tags in TestScale.reduced ? [descending != (index % 2 == 0)] : [false, true] {
                    // Every other filter in make test, the other half in the other direction; all in make test-full.
                    for filter in TestScale.sample(descending ? Array(filters.dropFirst()) : filters, stride: 2) {
                        try engines.expectParity(LibraryQuery(sort: field, descending: descending, useSortTags: tags, filter: filter))
                    }
                }
            }
        }
    }

    /// Walks a playlist page by page on both engines and compares every page.
    static func expectPlaylistParity(_ engines: Engines, _ playlist: PlaylistID, _ query: LibraryQuery, sorted: Bool) throws {
        for limit in [60, 1_000] {
            var cursors: [PageCursor?] = [nil, nil]
            var walked: [[TrackID]] = [[], []]
            var totals: [Int] = [0, 0]
            for (index, engine) in [engines.direct as any QueryEngine, engines.mirrored].enumerated() {
                repeat {
                    let page = try engine.playlistPage(playlist, query, sorted: sorted, after: cursors[index], limit: limit)
                    walked[index] += page.items.map(\.id)
                    cursors[index] = page.nextCursor
                    totals[index] = page.total
                } while cursors[index] != nil
            }
            #expect(totals[0] == totals[1] && totals[0] == walked[0].count, "total \(query) sorted=\(sorted)")
            #expect(
                walked[0] == walked[1],
                "playlist \(playlist) \(query.sort.rawValue) desc=\(query.descending) tags=\(query.useSortTags) sorted=\(sorted) filter=\(query.filter)")
            if sorted && limit == 60 {
                let sections = try engines.mirrored.playlistSections(playlist, query)
                #expect(sections == (try engines.direct.playlistSections(playlist, query)), "sections \(query.sort.rawValue) desc=\(query.descending)")
                #expect(sections.reduce(0) { $0 + $1.count } == walked[1].count)
            }
        }
    }

    @Test func playlistPagesAgreeInTheirOwnOrderAndSorted() async throws {
        let (dir, library) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        var random = SeededRandom(seed: 5)
        let ids = try await library.snapshot(LibraryQuery(sort: .title))
        let playlist = try await library.write { batch in
            let playlist = try batch.createPlaylist(Playlist(name: "Mixed"))
            // Repeats included, in no particular order, tricky tracks among them.
            try batch.setPlaylistItems(playlist, (0..<300).map { _ in ids[random.int(0...(ids.count - 1))] } + Array(ids.suffix(20)))
            return playlist
        }
        func check() throws {
            let engines = try Engines(library)
            for filter in [Filter.all, .and([.anyText("a"), .range(.year, lower: 1980, upper: 2000)])] {
                try Self.expectPlaylistParity(engines, playlist, LibraryQuery(filter: filter), sorted: false)
                for field in [SortField.artist, .year] {
                    for descending in [false, true] {
                        try Self.expectPlaylistParity(engines, playlist, LibraryQuery(sort: field, descending: descending, filter: filter), sorted: true)
                    }
                }
            }
            let sortedTags = LibraryQuery(sort: .albumArtist, useSortTags: false)
            try Self.expectPlaylistParity(engines, playlist, sortedTags, sorted: true)
        }
        try check()
        // Edits of the playlist and of its tracks reach the mirror with the write.
        try await library.write { batch in
            try batch.insertIntoPlaylist(playlist, [ids[0], ids[0]], at: 5)
            try batch.removeFromPlaylist(playlist, at: [0, 1, 2])
            try batch.deleteTrack(try batch.playlistItems(playlist)[10])
            try batch.updateTrack(try batch.playlistItems(playlist)[3]) {
                $0.artist = "Aaaa First"
                $0.sortArtist = nil
            }
        }
        try check()
        // Own order is a range scan of the items' key and a lookup per row, at any depth; a sorted
        // page sorts one playlist's rows (the listed exception: a temporary B-tree per playlist).
        let engines = try Engines(library)
        let cursor = PageCursor(key: [.number(100)], id: TrackID(1))
        let ownSQL = engines.mirrored.playlistPageSQL(playlist, LibraryQuery(), sorted: false, cursor: cursor)
        let plan = try engines.mirror.query("EXPLAIN QUERY PLAN " + ownSQL.sql, ownSQL.arguments + [50]) { try $0.string(3) }.joined(separator: " | ")
        #expect(plan.contains("SEARCH i USING PRIMARY KEY (playlist_id=? AND position>?)") && !plan.contains("TEMP B-TREE"), "\(plan)")
        #expect(plan.contains("SEARCH mirror_track USING INTEGER PRIMARY KEY"), "\(plan)")
        let page = try await library.playlistList(playlist, limit: 5)
        let count = try await library.playlistItems(playlist).count
        #expect(page.items.count == 5 && page.total == count)
        await #expect(throws: LibraryError.playlistNotFound(PlaylistID(999))) { try await library.playlistList(PlaylistID(999)) }
        let sections = try await library.playlistSections(playlist, sortedBy: LibraryQuery(sort: .artist))
        #expect(sections.reduce(0) { $0 + $1.count } == count && sections.first?.firstIndex == 0)
    }

    @Test func everySortIsAnIndexRangeScan() async throws {
        let (dir, library) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let engines = try Engines(library)
        let engine = engines.mirrored
        for field in SortField.allCases {
            for descending in [false, true] {
                for tags in [false, true] {
                    let query = LibraryQuery(sort: field, descending: descending, useSortTags: tags)
                    let first = try engine.page(query, after: nil, limit: 5)
                    let cursor = try #require(first.nextCursor)
                    for (sql, arguments, needsSearch) in [
                        (engine.pageSQL(query, cursor: nil, offset: false).sql, engine.pageSQL(query, cursor: nil, offset: false).arguments + [5], false),
                        (engine.pageSQL(query, cursor: cursor, offset: false).sql, engine.pageSQL(query, cursor: cursor, offset: false).arguments + [5], true),
                    ] {
                        let plan = try engines.mirror.query("EXPLAIN QUERY PLAN " + sql, arguments) { try $0.string(3) }.joined(separator: " | ")
                        let context = "\(field.rawValue) desc=\(descending) tags=\(tags): \(plan)"
                        #expect(!plan.contains("TEMP B-TREE"), "\(context)")
                        #expect(plan.contains(MirrorSchema.indexName(field, tags: tags)), "\(context)")
                        if needsSearch { #expect(plan.contains("SEARCH"), "\(context)") }
                    }
                }
            }
        }
        // An equality filter on a keyed text field answers "any rows?" from that field's sort index.
        for (field, index) in [(TextField.genre, "mirror_track_genre"), (.artist, "mirror_track_artist"), (.album, "mirror_track_album")] {
            let (filter, arguments) = MirrorFilter.compile(.text(field, .equals("Nothing Like This")))
            let plan = try engines.mirror.query(
                "EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM mirror_track WHERE \(filter))", arguments
            ) { try $0.string(3) }
            .joined(separator: " | ")
            #expect(plan.contains("SEARCH mirror_track USING INDEX \(index)"), "\(field): \(plan)")
        }
        // A contains-filter of three characters or more finds its rows through the trigram value
        // index and the field's sort index, never by scanning; a bare word unites the fields'.
        for (field, index) in [(TextField.title, "mirror_track_title"), (.artist, "mirror_track_artist"), (.composer, "mirror_track_composer")] {
            for filter in [Filter.text(field, .contains("宇多田")), .anyText("beat")] {
                let (sql, arguments) = MirrorFilter.compile(filter, db: engines.mirror)
                let plan = try engines.mirror.query("EXPLAIN QUERY PLAN SELECT count(*) FROM mirror_track WHERE \(sql)", arguments) { try $0.string(3) }
                    .joined(separator: " | ")
                #expect(plan.contains("SEARCH mirror_track USING INDEX \(index) (k_"), "\(field): \(plan)")
                #expect(plan.contains("mirror_value VIRTUAL TABLE") && !plan.contains("SCAN mirror_track"), "\(field): \(plan)")
            }
        }
    }

    @Test func deletingTheMirrorIsSafeAndItCatchesUpAfterACrash() async throws {
        let dir = try TemporaryDirectory()
        do {
            let library = Library(directory: dir.url)
            _ = try await DatasetGenerator(tracks: 300, seed: 2).fill(library)
            try await library.waitForMirror()
            #expect(try await library.mirrorStatus().state == .ready)
        }
        // Simulate a crash between a write and its mirror sync: write with the mirror off.
        do {
            let library = Library(directory: dir.url)
            try await library.disableMirror()
            try await library.write { batch in
                try batch.updateTrack(1) {
                    $0.artist = "Zzz Caught Up"
                    $0.sortArtist = nil
                }
            }
            try await library.enableMirror()
            try await library.waitForMirror()
            #expect(try await library.mirrorStatus().state == .ready)
            let page = try await library.list(LibraryQuery(sort: .artist, filter: .text(.artist, .equals("zzz caught up"))), limit: 5)
            #expect(page.items.map(\.id) == [TrackID(1)])
        }
        try FileManager.default.removeItem(at: dir.path("mirror.sqlite"))
        let library = Library(directory: dir.url)
        try await library.waitForMirror()
        #expect(try await library.mirrorStatus().state == .ready)
        #expect(try await library.list(LibraryQuery(sort: .title), limit: 10).total == 300)
        try await library.purgeMirror()
        #expect(!FileManager.default.fileExists(atPath: dir.path("mirror.sqlite").path))
        #expect(try await library.list(LibraryQuery(sort: .title), limit: 10).total == 300)  // direct path
    }

    @Test func anInterruptedBuildResumesFromWhereItStopped() async throws {
        let dir = try TemporaryDirectory()
        do {
            let library = Library(directory: dir.url)
            _ = try await DatasetGenerator(tracks: 1_500, seed: 4).fill(library)
            try await library.buildMirror(wait: true)
        }
        // What a crash after the first chunk leaves: rows up to the last committed chunk, the
        // resume point, and the state still "building" (indexes may or may not exist yet).
        do {
            let mirror = try Connection(path: dir.path("mirror.sqlite").path)
            try mirror.transaction {
                try mirror.execute(
                    script: """
                        DELETE FROM mirror_track WHERE id > 600;
                        DELETE FROM mirror_section;
                        UPDATE mirror_meta SET value = 'building' WHERE key = 'state';
                        UPDATE mirror_meta SET value = '600' WHERE key = 'build_next_id';
                        INSERT OR REPLACE INTO mirror_meta (key, value) VALUES ('build_rows', '600'), ('build_phase', 'rows');
                        """)
                // The section counts of the rows kept, as the builder commits them with each chunk.
                var counts: [String: [UInt8: Int]] = [:]
                let columns = MirrorSchema.sectionColumns
                try mirror.forEachRow("SELECT \(columns.joined(separator: ", ")) FROM mirror_track") { row in
                    MirrorStore.count(columns.indices.map { row.optionalData(Int32($0))?.first ?? 0xFF }, 1, into: &counts)
                }
                try MirrorStore.flush(counts, to: mirror)
            }
        }
        let library = Library(directory: dir.url)
        try await library.open()
        #expect(try await library.mirrorStatus().state == .building)
        try await library.waitForMirror()
        #expect(try await library.mirrorStatus().state == .ready)
        let engines = try Engines(library)
        #expect(try engines.mirror.scalar(Int.self, "SELECT count(*) FROM mirror_track") == 1_500)
        try engines.expectParity(LibraryQuery(sort: .title))
    }
}
