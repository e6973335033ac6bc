import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Libraries in the engine: roots belong to one library, imports join theirs, removal says what
/// goes, and a reader limited to some libraries sees exactly what a store holding only their
/// tracks would show (the oracle is the same generated library with the other tracks deleted).
@Suite struct LibrariesTests {
    /// Two real folders of distinct WAV files (different tones, so no duplicates by audio).
    static func folders(in directory: TemporaryDirectory) throws -> (a: URL, b: URL) {
        let a = directory.url.appendingPathComponent("a/Album")
        let b = directory.url.appendingPathComponent("b/Kids")
        for (folder, base) in [(a, 300.0), (b, 900.0)] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for index in 0..<3 {
                try TestAudio.wav(seconds: 0.2, frequency: base + Double(index) * 37).write(to: folder.appendingPathComponent("song\(index).wav"))
            }
        }
        return (a.deletingLastPathComponent(), b.deletingLastPathComponent())
    }

    /// A library whose first folder is Music's and whose second is the library Kids'.
    static func twoLibraries() async throws -> (TemporaryLibrary, URL, URL, MusicLibrary) {
        let fixture = try TemporaryLibrary()
        let (a, b) = try folders(in: fixture.directory)
        _ = try await fixture.library.importFiles(at: [a])
        let kids = try await fixture.library.addLibrary(name: "Kids", roots: [b])
        _ = try await fixture.library.importFiles(at: [b], options: ImportOptions(library: kids.id))
        return (fixture, a, b, kids)
    }

    @Test func rootsBelongToOneLibraryAndImportsJoinTheirs() async throws {
        let (fixture, a, b, kids) = try await Self.twoLibraries()
        let library = fixture.library
        let summaries = try await library.librarySummaries()
        #expect(summaries.map(\.name) == ["Music", "Kids"])
        #expect(summaries.map(\.tracks) == [3, 3] && summaries.allSatisfy { $0.roots.allSatisfy { $0.state == "online" } })
        #expect(summaries[0].roots.map(\.path) == [a.path] && summaries[1].roots.map(\.path) == [b.path])
        // A folder in Kids' root cannot become Music's, nor a folder holding it; a rescan of a
        // folder inside a root (no library named) changes nothing.
        await #expect(throws: LibraryError.self) { try await library.rememberRoots([b.appendingPathComponent("Kids")], into: 1) }
        await #expect(throws: LibraryError.self) { try await library.addLibrary(name: "Everything", roots: [fixture.directory.url]) }
        try await library.rememberRoots([b.appendingPathComponent("Kids")])
        #expect(try await library.libraries().first { $0.name == "Kids" }?.roots == [b.path])
        // Names: unique without case, and never one the flags would split.
        await #expect(throws: LibraryError.self) { try await library.renameLibrary("Kids", to: "music") }
        await #expect(throws: LibraryError.self) { try await library.addLibrary(name: "A,B", roots: []) }
        try await library.renameLibrary("Kids", to: "Children")
        #expect(try await library.musicLibrary(named: "children").id == kids.id)
    }

    @Test func removingALibraryRefusesWhileItHoldsTracksAndSaysWhatWent() async throws {
        let (fixture, _, _, kids) = try await Self.twoLibraries()
        let library = fixture.library
        _ = try await library.addUser(name: "admin", password: "pass-word", admin: true)  // the first user is an admin
        let user = try await library.addUser(name: "kid", password: "pass-word")
        try await library.setLibraries(user.id, [kids.id])
        let kidsScope = try await library.scope(libraries: [kids.id])
        let theirs = try await LibraryScope.$current.withValue(kidsScope) { try await library.snapshot(LibraryQuery()) }
        #expect(theirs.count == 3)
        try await library.write { batch in
            try batch.setStarred([theirs[0], theirs[1]], by: user.id, true)
            try batch.setRating(theirs[0], by: user.id, 80)
            let playlist = try batch.createPlaylist(Playlist(name: "mix"))
            try batch.setPlaylistItems(playlist, [theirs[0], theirs[0], theirs[2]])
        }
        await #expect(throws: LibraryError.self) { try await library.removeLibrary("Kids", deleteTracks: false) }
        #expect(try await library.info().trackCount == 6)
        let removal = try await library.removeLibrary("Kids", deleteTracks: true)
        #expect(removal == LibraryRemoval(library: "Kids", tracks: 3, stars: 2, ratings: 1, playlistEntries: 3))
        #expect(try await library.info().trackCount == 3)
        #expect(try await library.libraries().map(\.name) == ["Music"])
        // The user who saw only Kids now sees nothing, not everything.
        #expect(try await library.user(id: user.id)?.libraries == [])
        let scope = try await library.scope(for: try #require(try await library.user(id: user.id)))
        #expect(try await LibraryScope.$current.withValue(scope) { try await library.list(LibraryQuery()).total } == 0)
    }

    /// The generated library split by album-artist folder; `scoped` holds every track, `oracle`
    /// the same tracks (same IDs) with those outside the scope deleted.
    struct Pair {
        let scoped: TemporaryLibrary
        let oracle: TemporaryLibrary
        let scope: LibraryScope
    }

    static func pair(tracks: Int = 300, seed: UInt64 = 5) async throws -> Pair {
        let scoped = try await TemporaryLibrary.seeded(tracks: tracks, seed: seed)
        let oracle = try await TemporaryLibrary.seeded(tracks: tracks, seed: seed)
        let all = try await scoped.library.tracks(ids: try await scoped.library.snapshot(LibraryQuery())).tracks
        let folders = Array(Set(all.map { Library.parentPath(Library.parentPath($0.path)) })).sorted()
        let chosen = folders.enumerated().filter { $0.offset % 3 != 0 }.map { URL(fileURLWithPath: $0.element) }
        let other = folders.enumerated().filter { $0.offset % 3 == 0 }.map { URL(fileURLWithPath: $0.element) }
        let library = try await scoped.library.addLibrary(name: "Chosen", roots: chosen, evenIfAbsent: true)
        _ = try await scoped.library.addLibrary(name: "Other", roots: other, evenIfAbsent: true)
        let scope = try await scoped.library.scope(libraries: [library.id])
        let outside = all.filter { !scope.contains(path: $0.path) }.map(\.id)
        try await oracle.library.write { batch in for id in outside { try batch.deleteTrack(id) } }
        _ = try await oracle.library.completeMirror()
        _ = try await scoped.library.completeMirror()
        return Pair(scoped: scoped, oracle: oracle, scope: scope)
    }

    @Test func aLimitedReaderSeesWhatAStoreOfOnlyTheirTracksWouldShow() async throws {
        let pair = try await Self.pair()
        let (scoped, oracle) = (pair.scoped.library, pair.oracle.library)
        try await LibraryScope.$current.withValue(pair.scope) {
            for kind in GroupKind.allCases {
                for tags in [true, false] {
                    let query = GroupQuery(kind: kind, useSortTags: tags)
                    let mine = try await scoped.groups(query, limit: 10_000)
                    let theirs = try await oracle.groups(query, limit: 10_000, scope: .all)
                    #expect(mine.items == theirs.items && mine.total == theirs.total, "\(kind) tags \(tags)")
                    #expect(try await scoped.groupSections(query) == (try await oracle.groupSections(query, scope: .all)), "\(kind) sections")
                    // A deep page by offset and one by cursor agree with the oracle's too.
                    if mine.items.count > 10 {
                        #expect(try await scoped.groups(query, offset: 7, limit: 3).items == Array(theirs.items[7..<10]))
                        let next = try await scoped.groups(query, after: try await scoped.groups(query, limit: 5).nextCursor, limit: 3)
                        #expect(next.items == Array(theirs.items[5..<8]))
                    }
                }
            }
            let albums = try await oracle.groups(GroupQuery(kind: .album), limit: 10_000, scope: .all).items
            for album in albums.prefix(20) {
                #expect(try await scoped.albumTracks(album.id) == (try await oracle.albumTracks(album.id, scope: .all)))
            }
            for sort in [SortField.artist, .title, .year, .dateAdded] {
                let query = LibraryQuery(sort: sort)
                #expect(try await scoped.snapshot(query) == (try await LibraryScope.$current.withValue(.all) { try await oracle.snapshot(query) }))
                #expect(try await scoped.sections(query) == (try await LibraryScope.$current.withValue(.all) { try await oracle.sections(query) }))
            }
            let hits = try await scoped.search("a", limit: 500)
            let oracleHits = try await LibraryScope.$current.withValue(.all) { try await oracle.search("a", limit: 500) }
            #expect(Set(hits.items.map(\.id)) == Set(oracleHits.items.map(\.id)) && hits.total == oracleHits.total)
            // Random picks come from the scope alone; a track outside it is nil by ID.
            let visible = Set(try await oracle.snapshot(LibraryQuery()))
            #expect(Set(try await scoped.randomTracks(50)).isSubset(of: visible))
            let outside = try #require(
                try await LibraryScope.$current.withValue(.all) { try await scoped.snapshot(LibraryQuery()) }.first { !visible.contains($0) })
            #expect(try await scoped.track(outside) == nil)
            #expect(try await scoped.tracks(ids: [outside]).missing == [outside])

            // A play changes no view (the kept views answer on); a retag does, and is seen at once.
            let mine = try #require(visible.first)
            for library in [scoped, oracle] {
                try await library.write { batch in _ = try batch.updateTrack(mine) { $0.playCount += 3 } }
            }
            #expect(
                try await scoped.groups(GroupQuery(kind: .album), limit: 10_000).items
                    == (try await oracle.groups(GroupQuery(kind: .album), limit: 10_000, scope: .all).items))
            for library in [scoped, oracle] {
                try await library.write { batch in _ = try batch.updateTrack(mine) { $0.album = "A Retagged Album" } }
            }
            let retagged = try await scoped.groups(GroupQuery(kind: .album), limit: 10_000).items
            #expect(retagged.contains { $0.name == "A Retagged Album" })
            #expect(retagged == (try await oracle.groups(GroupQuery(kind: .album), limit: 10_000, scope: .all).items))
        }
    }

    @Test func smartPlaylistsAreEvaluatedWithinTheReadersLibraries() async throws {
        let pair = try await Self.pair(tracks: 200, seed: 9)
        let rules = SmartRules(.filter(.all), limit: .items(10), selection: .mostRecentlyAdded)
        let id = try await pair.scoped.library.createSmartPlaylist(name: "newest", rules: rules)
        let oracleID = try await pair.oracle.library.createSmartPlaylist(name: "newest", rules: rules)
        let mine = try await LibraryScope.$current.withValue(pair.scope) { try await pair.scoped.library.smartPlaylistTracks(id) }
        let theirs = try await pair.oracle.library.smartPlaylistTracks(oracleID, scope: .all)
        // Ten of the reader's own newest, not the few of the whole library's ten that they may see.
        #expect(mine.count == 10 && mine == theirs)
    }

    @Test func foldersAreWalkedAsOnDiskWithStableIDs() async throws {
        let fixture = try TemporaryLibrary()
        let library = fixture.library
        let (a, b) = try Self.folders(in: fixture.directory)
        let nested = a.appendingPathComponent("Album/Disc 2")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try TestAudio.wav(seconds: 0.2, frequency: 1_500).write(to: nested.appendingPathComponent("bonus.wav"))
        _ = try await library.importFiles(at: [a, b])
        let roots = try await library.rootFolders()
        #expect(roots.map(\.path) == [a.path, b.path] && roots.allSatisfy { $0.parent == nil && $0.relativePath == "" })
        let top = try #require(try await library.folder(roots[0].id))
        #expect(top.folders.map(\.name) == ["Album"] && top.tracks.isEmpty)
        let album = try #require(try await library.folder(top.folders[0].id))
        #expect(album.folders.map(\.relativePath) == ["Album/Disc 2"] && album.folder.parent == roots[0].id)
        let files = try await library.tracks(ids: album.tracks).tracks.map { URL(fileURLWithPath: $0.path).lastPathComponent }
        #expect(files == ["song0.wav", "song1.wav", "song2.wav"])
        // A play keeps the walk; a file added is in the next listing.
        try await library.write { batch in _ = try batch.updateTrack(album.tracks[0]) { $0.playCount += 1 } }
        #expect(try await library.folder(album.folder.id)?.tracks == album.tracks)
        try TestAudio.wav(seconds: 0.2, frequency: 1_700).write(to: a.appendingPathComponent("Album/song3.wav"))
        _ = try await library.importFiles(at: [a.appendingPathComponent("Album/song3.wav")])
        #expect(try await library.folder(album.folder.id)?.tracks.count == 4)
        // The ID is the path's: the same after a restart (a new Library learns it by walking).
        let reopened = Library(directory: fixture.directory.url)
        #expect(try await reopened.folder(album.folders[0].id)?.tracks.count == 1)
        #expect(try await reopened.folder(FolderID(rawValue: 12_345)) == nil)
        // A reader limited to the other library does not see it, by ID or by path.
        let kids = try await library.addLibrary(name: "Kids", roots: [])
        let scope = try await library.scope(libraries: [kids.id])
        let (byID, byPath, roots2) = try await LibraryScope.$current.withValue(scope) {
            (try await library.folder(album.folder.id), try await library.folder(atPath: a.path), try await library.rootFolders())
        }
        #expect(byID == nil && byPath == nil && roots2.isEmpty)
    }
}
