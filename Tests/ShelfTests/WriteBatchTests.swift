import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

struct Boom: Error {}

@Suite struct WriteBatchTests {
    @Test func insertUpdateDeleteAreLoggedWithGroups() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let (a, b) = try await library.write { batch in
            (try batch.insert(sampleTrack(1)), try batch.insert(sampleTrack(2)))
        }
        #expect(a != b)
        try await library.write { batch in
            try batch.updateTrack(a) { $0.playCount = 3 }
            try batch.updateTrack(b) {
                $0.title = "Renamed"
                $0.path = "/elsewhere.flac"
            }
        }
        let noChange = try await library.write { batch in try batch.updateTrack(a) { $0.playCount = 3 } }
        #expect(noChange.isEmpty)
        try await library.write { batch in try batch.deleteTrack(b) }

        let log = try await library.changeLog()
        #expect(log.map(\.transaction) == [1, 1, 2, 2, 3])  // the no-op batch wrote no transaction
        #expect(log.map(\.operation) == [.insert, .insert, .update, .update, .delete])
        #expect(log.map(\.objectID) == [a.rawValue, b.rawValue, a.rawValue, b.rawValue, b.rawValue])
        #expect(log[2].groups == .playStats)
        #expect(log[3].groups == [.metadata, .file])
        #expect(try await library.track(b) == nil)
        let stored = try #require(try await library.track(a))
        #expect(stored.playCount == 3)
        #expect(stored.dateModified == Date(timeIntervalSince1970: 1_700_000_000))  // play stats leave it
    }

    @Test func changesCollapseWithinABatch() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let kept = try await library.write { batch in
            let kept = try batch.insert(sampleTrack(1))
            try batch.updateTrack(kept) { $0.rating = 40 }
            let gone = try batch.insert(sampleTrack(2))
            try batch.deleteTrack(gone)
            return kept
        }
        try await library.write { batch in
            try batch.updateTrack(kept) { $0.rating = 60 }
            try batch.updateTrack(kept) { $0.album = "Other" }
        }
        let log = try await library.changeLog()
        #expect(log.count == 2)
        #expect(log[0].operation == .insert)
        #expect(log[1].operation == .update)
        #expect(log[1].groups == [.playStats, .metadata])
    }

    @Test func rolledBackBatchLeavesNoRowsAndNoLog() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { try $0.insert(sampleTrack(1)) }
        await #expect(throws: Boom.self) {
            try await library.write { batch in
                try batch.insert(sampleTrack(2))
                try batch.addArtwork(Data([1, 2, 3]))
                try batch.createPlaylist(Playlist(name: "P"))
                throw Boom()
            }
        }
        let info = try await library.info()
        #expect(info.trackCount == 1)
        #expect(info.artworkCount == 0)
        #expect(info.playlistCount == 0)
        #expect(try await library.changeLog().count == 1)
        let db = try Connection(path: library.storeURL.path, mode: .readOnly)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM change_transaction") == 1)
    }

    @Test func aFailingStatementRollsBackTheWholeBatch() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        await #expect(throws: LibraryError.duplicatePath("/music/Artist/1.flac")) {
            try await library.write { batch in
                try batch.insert(sampleTrack(1))
                try batch.insert(sampleTrack(1))
            }
        }
        #expect(try await library.info().trackCount == 0)
        #expect(try await library.changeLog().isEmpty)
    }

    @Test func badValuesAreRejectedByName() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        var track = sampleTrack(1)
        track.rating = 101
        await #expect(throws: LibraryError.invalidValue(field: "rating", value: "101", reason: "must be 0–100")) {
            try await library.write { try $0.insert(track) }
        }
        await #expect(throws: LibraryError.trackNotFound(99)) {
            try await library.write { try $0.deleteTrack(99) }
        }
    }

    @Test func oneCommitPerBatch() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.open()
        let commits = Locked(0)
        await library.setWriterCommitHandler { commits.withLock { $0 += 1 } }
        try await library.write { batch in
            for n in 0..<500 { try batch.insert(sampleTrack(n)) }
            let art = try batch.addArtwork(Data(repeating: 7, count: 100))
            try batch.updateTrack(TrackID(1)) { $0.artworkID = art }
            let list = try batch.createPlaylist(Playlist(name: "Mix"))
            try batch.setPlaylistItems(list, [1, 2, 3])
        }
        #expect(commits.withLock { $0 } == 1)
        await library.setWriterCommitHandler(nil)
    }

    @Test func artworkIsContentAddressedSharedAndCollected() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let picture = Data((0..<5_000).map { UInt8($0 % 251) })
        let (a, b, artA, artB) = try await library.write { batch in
            let artA = try batch.addArtwork(picture)
            let artB = try batch.addArtwork(picture)
            var t1 = sampleTrack(1)
            t1.artworkID = artA
            var t2 = sampleTrack(2)
            t2.artworkID = artB
            return (try batch.insert(t1), try batch.insert(t2), artA, artB)
        }
        #expect(artA == artB)
        #expect(try await library.info().artworkCount == 1)
        #expect(try await library.artworkData(artA) == picture)
        #expect(try await library.track(a)?.hasArtwork == true)
        // An unused picture added in a batch is collected at its end.
        try await library.write { batch in _ = try batch.addArtwork(Data([9, 9, 9])) }
        #expect(try await library.info().artworkCount == 1)
        try await library.write { try $0.deleteTrack(a) }
        #expect(try await library.info().artworkCount == 1)  // still shown by b
        await #expect(throws: LibraryError.artworkInUse(artA)) { try await library.write { try $0.deleteArtwork(artA) } }
        try await library.write { batch in try batch.updateTrack(b) { $0.artworkID = nil } }
        #expect(try await library.info().artworkCount == 0)
        let log = try await library.changeLog()
        #expect(log.filter { $0.objectType == .artwork }.map(\.operation) == [.insert, .delete])
        #expect(log.last?.artworkID == artA)
        #expect(log.dropLast().last?.groups == .artwork)
        let unknown = ArtworkID(UUID())
        await #expect(throws: LibraryError.artworkNotFound(unknown)) {
            try await library.write { batch in
                var t = sampleTrack(9)
                t.artworkID = unknown
                try batch.insert(t)
            }
        }
    }

    @Test func playlistsKeepOrderDuplicatesAndFolders() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let (ids, folder, list) = try await library.write { batch in
            let ids = try (1...3).map { try batch.insert(sampleTrack($0)) }
            let folder = try batch.createPlaylist(Playlist(name: "Folder", kind: .folder))
            let list = try batch.createPlaylist(Playlist(name: "Mix", parentID: folder))
            try batch.setPlaylistItems(list, [ids[2], ids[0], ids[2]])
            try batch.appendToPlaylist(list, [ids[1]])
            return (ids, folder, list)
        }
        #expect(try await library.playlistItems(list) == [ids[2], ids[0], ids[2], ids[1]])
        try await library.write { try $0.deleteTrack(ids[2]) }
        #expect(try await library.playlistItems(list) == [ids[0], ids[1]])
        let afterDelete = try await library.changeLog().suffix(2)
        #expect(afterDelete.contains { $0.objectType == .playlist && $0.objectID == list.rawValue && $0.groups == .items })
        await #expect(throws: LibraryError.self) {
            try await library.write { batch in
                var moved = try #require(try batch.playlist(folder))
                moved.parentID = list  // not a folder
                try batch.updatePlaylist(moved)
            }
        }
        try await library.write { try $0.deletePlaylist(folder) }
        #expect(try await library.playlists().isEmpty)
        let deletes = try await library.changeLog().filter { $0.objectType == .playlist && $0.operation == .delete }
        #expect(Set(deletes.compactMap(\.objectID)) == [folder.rawValue, list.rawValue])
    }
}
