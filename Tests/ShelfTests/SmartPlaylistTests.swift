import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite(.serialized) struct SmartPlaylistTests {
    /// Rule shapes covering every condition kind, nesting, each limit and each selection.
    static func shapes(regular: PlaylistID) -> [SmartRules] {
        let rock = SmartCondition.filter(.text(.genre, .equals("rock")))
        let rated = SmartCondition.filter(.range(.rating, lower: 40, upper: nil))
        return [
            SmartRules(.all([rock, rated])),
            SmartRules(.any([rock, .filter(.text(.artist, .contains("the"))), .not(.filter(.missingText(.composer)))])),
            SmartRules(.all([.inLastDays(.dateAdded, days: 200), .any([rated, .filter(.flag(.compilation, true))])])),
            SmartRules(.inPlaylist(regular)),
            SmartRules(.all([.notInPlaylist(regular), .filter(.range(.year, lower: 1980, upper: 2000))])),
            SmartRules(.not(.all([rock, .not(rated)]))),
            SmartRules(.filter(.anyText("a")), limit: .items(25), selection: .random),
            SmartRules(rated, limit: .items(40), selection: .mostPlayed),
            SmartRules(.filter(.all), limit: .items(30), selection: .leastPlayed),
            SmartRules(rock, limit: .items(10), selection: .highestRated),
            SmartRules(.filter(.all), limit: .duration(3_000), selection: .mostRecentlyAdded),
            SmartRules(.filter(.all), limit: .size(200_000_000), selection: .mostRecentlyPlayed),
        ]
    }

    static func expectParity(_ library: Library, _ ids: [PlaylistID]) async throws {
        let context = try await library.smartContext()
        let engines = try Engines(library)
        for id in ids {
            let direct = try engines.direct.smartTracks(id, context)
            #expect(try engines.mirrored.smartTracks(id, context) == direct, "smart playlist \(id): \(String(describing: context.rules[id]))")
        }
        // Pages in the playlist's own order and sorted, filtered or not, walked on both paths.
        // Seven playlists' pages in make test-full; four in make test (the first two and the last two).
        for id in TestScale.reduced ? ids.prefix(2) + ids.suffix(2) : ids.prefix(3) + ids.suffix(4) {
            // Every third shape in make test (the direct path walks the whole playlist per page); all in make test-full.
            for (query, sorted) in TestScale.sample(
                [
                    (LibraryQuery(), false), (LibraryQuery(sort: .artist), true), (LibraryQuery(sort: .year, descending: true), true),
                    (LibraryQuery(filter: .anyText("e")), false), (LibraryQuery(sort: .title, filter: .anyText("e")), true),
                ], stride: 2)
            {
                func walk(_ engine: any QueryEngine) throws -> ([TrackID], Int) {
                    var ids: [TrackID] = []
                    var cursor: PageCursor?
                    var total = 0
                    repeat {
                        // Short pages first (cursor edges), then long ones (the direct path evaluates
                        // the whole playlist for each page).
                        let page = try engine.smartPage(id, context, query, sorted: sorted, after: cursor, limit: ids.count < 20 ? 7 : 150)
                        ids += page.items.map(\.id)
                        total = page.total
                        cursor = page.nextCursor
                    } while cursor != nil && ids.count < 5_000
                    return (ids, total)
                }
                let (direct, directTotal) = try walk(engines.direct)
                let (mirrored, mirroredTotal) = try walk(engines.mirrored)
                #expect(mirrored == direct && mirroredTotal == directTotal && direct.count == directTotal, "page of \(id) sorted=\(sorted) \(query.sort)")
                if sorted {
                    // Sections of the sorted list: equal on both paths, and they tile it.
                    let sections = try engines.mirrored.smartSections(id, context, query)
                    #expect(try engines.direct.smartSections(id, context, query) == sections, "sections of \(id) \(query.sort)")
                    #expect(sections.reduce(0) { $0 + $1.count } == directTotal, "sections of \(id) cover the list")
                }
            }
        }
    }

    @Test func everyRuleShapeAgreesWithTheDirectPathAndFollowsWrites() async throws {
        let (dir, library) = try await MirrorParityTests.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let regular = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "Picked"))
            try batch.insertIntoPlaylist(id, (1...80).map { TrackID(Int64($0 * 11)) }, at: 0)
            return id
        }
        var ids: [PlaylistID] = []
        for (index, rules) in Self.shapes(regular: regular).enumerated() {
            ids.append(try await library.createSmartPlaylist(name: "Smart \(index)", rules: rules))
        }
        // Smart playlists over smart playlists.
        ids.append(try await library.createSmartPlaylist(name: "Nested", rules: SmartRules(.all([.inPlaylist(ids[0]), .notInPlaylist(ids[6])]))))
        ids.append(try await library.createSmartPlaylist(name: "Nested twice", rules: SmartRules(.any([.inPlaylist(ids.last!), .inPlaylist(ids[7])]))))
        try await Self.expectParity(library, ids)
        #expect(try await library.smartPlaylistTracks(ids[6]).count == 25)
        #expect(try await !library.smartPlaylistTracks(ids[0]).isEmpty)
        // `playlistList` pages a smart playlist like any other.
        let firstPage = try await library.playlistList(ids[7], limit: 10)
        #expect(firstPage.items.map(\.id) == Array(try await library.smartPlaylistTracks(ids[7]).prefix(10)) && firstPage.total == 40)
        for round in 0..<TestScale.rounds(4, sanitized: 1) {
            try await library.write { batch in try randomGroupEdits(batch, seed: UInt64(round) + 900) }
        }
        try await Self.expectParity(library, ids)
        // Live: a write changes what the playlist holds before the write call returns.
        let first = try #require(try await library.smartPlaylistTracks(ids[0]).first)
        try await library.write { batch in try batch.updateTrack(first) { $0.rating = 0 } }
        #expect(try await !library.smartPlaylistTracks(ids[0]).contains(first))
    }

    @Test func rulesThatCannotBeEvaluatedAreRejectedWhenSaved() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let folder = try await library.write { batch in try batch.createPlaylist(Playlist(name: "Folder", kind: .folder)) }
        let a = try await library.createSmartPlaylist(name: "A", rules: SmartRules(.filter(.all)))
        let b = try await library.createSmartPlaylist(name: "B", rules: SmartRules(.inPlaylist(a)))
        func reason(_ body: () async throws -> Void) async -> String? {
            do {
                try await body()
                return nil
            } catch let LibraryError.invalidValue(_, _, reason) { return reason } catch { return "\(error)" }
        }
        #expect(
            await reason { _ = try await library.createSmartPlaylist(name: "X", rules: SmartRules(.inPlaylist(PlaylistID(99)))) }?.contains("does not exist")
                == true)
        #expect(await reason { _ = try await library.createSmartPlaylist(name: "X", rules: SmartRules(.inPlaylist(folder))) }?.contains("folder") == true)
        #expect(
            await reason { _ = try await library.createSmartPlaylist(name: "X", rules: SmartRules(.filter(.all), limit: .items(0), selection: .random)) } != nil
        )
        #expect(
            await reason { _ = try await library.createSmartPlaylist(name: "X", rules: SmartRules(.filter(.all), limit: .items(5))) }?.contains("selection")
                == true)
        // A → B → A, and A → A.
        for rules in [SmartRules(.inPlaylist(b)), SmartRules(.not(.inPlaylist(a)))] {
            let loop = await reason {
                try await library.write { batch in
                    var playlist = try #require(try batch.playlist(a))
                    playlist.rules = try rules.json()
                    try batch.updatePlaylist(playlist)
                }
            }
            #expect(loop?.contains("itself") == true, "\(String(describing: loop))")
        }
        #expect(try await library.write { batch in try batch.playlist(a)?.rules } == (try SmartRules(.filter(.all)).json()))
        // The rule language of the command line.
        #expect(
            try SmartRules.parseCondition("genre:=Rock dateAdded:last:30d -playlist:4 , rating:>=80")
                == .any([
                    .all([.filter(.text(.genre, .equals("Rock"))), .inLastDays(.dateAdded, days: 30), .notInPlaylist(PlaylistID(4))]),
                    .filter(.range(.rating, lower: 80, upper: nil)),
                ]))
        #expect(throws: FilterParseError.self) { try SmartRules.parseCondition("year:last:3") }
    }
}
