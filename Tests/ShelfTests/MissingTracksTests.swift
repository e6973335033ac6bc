import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Missing files and offline roots: a track whose file goes is kept (hidden, with everything of
/// its own) and comes back whole; a root that is not there spares its tracks entirely.
@Suite struct MissingTracksTests {
    struct Fixture {
        let dir: TemporaryDirectory
        let music: URL
        let library: Library
        let ids: [TrackID]
        let playlist: PlaylistID
        let user: UserID
        /// Each track's rating after the fixture's writes.
        let ratings: [Int]
    }

    /// Three tracks under one root, each rated, starred and in a playlist.
    static func fixture() async throws -> Fixture {
        let dir = try TemporaryDirectory()
        let music = dir.path("music")
        for index in 0..<3 {
            _ = try ImportTests.wav(music.appendingPathComponent("album/\(index).wav"), frequency: 300 + Double(index) * 110, tags: ["TITLE": "T\(index)"])
        }
        let library = Library(directory: dir.path("lib"))
        #expect(try await library.importFiles(at: [music]).added == 3)
        let ids = try await library.snapshot(LibraryQuery(sort: .title))
        let user = try await library.addUser(name: "ann", password: "secret-pass")
        let playlist = try await library.write { batch in
            let playlist = try batch.createPlaylist(Playlist(name: "Mix"))
            try batch.insertIntoPlaylist(playlist, ids.reversed(), at: 0)
            for id in ids {
                try batch.updateTrack(id) {
                    $0.playCount = 5
                    $0.rating = 80
                }
                try batch.setRating(id, by: user.id, 4)
            }
            try batch.setStarred(ids, by: user.id, true)
            return playlist
        }
        try await library.waitForMirror()
        var ratings: [Int] = []
        for id in ids { ratings.append(try #require(try await library.track(id)).rating) }
        #expect(ratings.allSatisfy { $0 > 0 })
        return Fixture(dir: dir, music: music, library: library, ids: ids, playlist: playlist, user: user.id, ratings: ratings)
    }

    /// Everything of a track's own is as the fixture made it.
    static func expectIntact(_ f: Fixture, _ sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for (id, rating) in zip(f.ids, f.ratings) {
            let track = try #require(try await f.library.track(id), sourceLocation: sourceLocation)
            #expect(track.playCount == 5 && track.rating == rating, sourceLocation: sourceLocation)
        }
        #expect(try await f.library.playlistItems(f.playlist) == f.ids.reversed(), sourceLocation: sourceLocation)
        #expect(Set(try await f.library.starredTracks(of: f.user)) == Set(f.ids), sourceLocation: sourceLocation)
    }

    @Test func aDeletedFileMarksItsTrackMissingAndItsAudioBringsItBackWhole() async throws {
        let f = try await Self.fixture()
        let gone = f.music.appendingPathComponent("album/1.wav")
        let kept = try Data(contentsOf: gone)
        try FileManager.default.removeItem(at: gone)
        let report = try await f.library.scanMissing()
        #expect(report.roots.map(\.state) == ["online"] && report.newlyMissing == 1)
        #expect(report.missing.map(\.id) == [f.ids[1]])
        let track = try #require(try await f.library.track(f.ids[1]))
        #expect(track.missing && track.missingSince != nil)
        // Hidden from lists (mirror and store alike), listed by the filter, readable by ID.
        try await f.library.waitForMirror()
        #expect(try await f.library.list(LibraryQuery(sort: .title)).items.map(\.id) == [f.ids[0], f.ids[2]])
        let missingOnly = LibraryQuery(sort: .title, filter: try FilterParser.parse("missing:yes"))
        #expect(try await f.library.list(missingOnly).items.map(\.id) == [f.ids[1]])
        #expect(try await f.library.list(LibraryQuery(filter: try FilterParser.parse("missing:no"))).total == 2)
        #expect(try await f.library.info().trackCount == 3)
        try await Self.expectIntact(f)
        // A second scan changes nothing more.
        #expect(try await f.library.scanMissing().newlyMissing == 0)

        // The same audio comes back elsewhere under the root: the same track, whole.
        let moved = f.music.appendingPathComponent("elsewhere/renamed.wav")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try kept.write(to: moved)
        let back = try await f.library.importFiles(at: [f.music])
        #expect(back.moved == 1 && back.added == 0)
        let returned = try #require(try await f.library.track(f.ids[1]))
        #expect(!returned.missing && returned.path == moved.path)
        try await f.library.waitForMirror()
        #expect(try await f.library.list(LibraryQuery()).total == 3)
        try await Self.expectIntact(f)

        // Pruning removes only what is missing.
        try FileManager.default.removeItem(at: moved)
        let pruned = try await f.library.scanMissing(prune: true)
        #expect(pruned.pruned == 1 && pruned.missing.isEmpty)
        #expect(try await f.library.track(f.ids[1]) == nil)
        #expect(try await f.library.track(f.ids[0]) != nil)
    }

    @Test func aFileBackAtItsOwnPathIsReadAgainByTheScan() async throws {
        let f = try await Self.fixture()
        let file = f.music.appendingPathComponent("album/0.wav")
        let kept = try Data(contentsOf: file)
        try FileManager.default.removeItem(at: file)
        #expect(try await f.library.scanMissing().newlyMissing == 1)
        try kept.write(to: file)
        let report = try await f.library.scanMissing()
        #expect(report.returned == 1 && report.missing.isEmpty)
        #expect(try await f.library.track(f.ids[0])?.missing == false)
        try await Self.expectIntact(f)
    }

    @Test func aFileBackUnchangedIsNoLongerMissingAndAlbumsFollow() async throws {
        let f = try await Self.fixture()
        let albums = { try await f.library.groups(GroupQuery(kind: .album), offset: 0, limit: 50).items.map { ($0.name, $0.trackCount) } }
        #expect(try await albums().map(\.1) == [3])
        // Moved away and back (a rename keeps the modification time): the same size and time.
        // (Moving the whole album would leave the root empty: offline, judged not at all.)
        let aside = f.dir.path("aside.wav")
        let file = f.music.appendingPathComponent("album/1.wav")
        try FileManager.default.moveItem(at: file, to: aside)
        #expect(try await f.library.scanMissing().newlyMissing == 1)
        try await f.library.waitForMirror()
        #expect(try await albums().map(\.1) == [2])
        try FileManager.default.moveItem(at: aside, to: file)
        let back = try await f.library.scanMissing()
        #expect(back.returned == 1 && back.missing.isEmpty, "\(back)")
        try await f.library.waitForMirror()
        #expect(try await albums().map(\.1) == [3])
        try await Self.expectIntact(f)
    }

    @Test func aRootThatIsGoneOrEmptyIsOfflineAndNothingOfItIsMarkedOrPruned() async throws {
        let f = try await Self.fixture()
        #expect(try await f.library.musicRoots() == [f.music.standardizedFileURL.path])
        let aside = f.dir.path("aside")
        // The root folder deleted (moved away): offline, gone.
        try FileManager.default.moveItem(at: f.music, to: aside)
        var report = try await f.library.scanMissing(prune: true)
        #expect(report.roots.map(\.state) == ["offline"] && report.roots.first?.reason == "gone")
        #expect(report.newlyMissing == 0 && report.pruned == 0 && report.keptOffline == 3 && report.missing.isEmpty)
        // An empty folder where it was full (an unmounted mount point): offline, empty.
        try FileManager.default.createDirectory(at: f.music, withIntermediateDirectories: true)
        report = try await f.library.scanMissing(prune: true)
        #expect(report.roots.first?.reason == "empty" && report.pruned == 0 && report.newlyMissing == 0)
        // A server's scan imports nothing from it either; the tracks are all still listed.
        try await f.library.waitForMirror()
        #expect(try await f.library.list(LibraryQuery()).total == 3)
        // Back: online, nothing lost.
        try FileManager.default.removeItem(at: f.music)
        try FileManager.default.moveItem(at: aside, to: f.music)
        report = try await f.library.scanMissing()
        #expect(report.roots.map(\.state) == ["online"] && report.missing.isEmpty)
        try await Self.expectIntact(f)
    }

    @Test func aFolderOnAnotherFileSystemWithoutTheFilesIsOffline() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            let root = dir.path("root")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("x"), withIntermediateDirectories: true)
            let device = try #require(Library.device(of: root.path))
            let sample = [root.appendingPathComponent("x/gone.flac").path]
            #expect(Library.judge(root.path, recordedDevice: device + 1, tracks: 1, sample: sample).reason == "another file system")
            // Same device: the files are simply gone (online, so they are marked missing).
            #expect(Library.judge(root.path, recordedDevice: device, tracks: 1, sample: sample).online)
            // Another device with the files there: the library moved disks, still online.
            try Data("x".utf8).write(to: URL(fileURLWithPath: sample[0]))
            #expect(Library.judge(root.path, recordedDevice: device + 1, tracks: 1, sample: sample).online)
        }
    }

    @Test func rootsNestAndFilesAreNoRoots() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.path("lib"))
        let outer = dir.path("m")
        let inner = outer.appendingPathComponent("a")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        let file = inner.appendingPathComponent("f.wav")
        try TestAudio.wav().write(to: file)
        try await library.rememberRoots([inner, file])
        #expect(try await library.musicRoots() == [inner.path])
        try await library.rememberRoots([outer])
        #expect(try await library.musicRoots() == [outer.path])
        try await library.rememberRoots([inner])
        #expect(try await library.musicRoots() == [outer.path])
    }
}
