import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite struct PlaylistEditTests {
    @Test func insertMoveAndRemoveKeepOrderAndDuplicates() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.disableMirror()
        let (playlist, t) = try await library.write { batch in
            let t = try (0..<5).map { try batch.insert(sampleTrack($0)) }
            let playlist = try batch.createPlaylist(Playlist(name: "Mix"))
            try batch.setPlaylistItems(playlist, [t[0], t[1], t[2]])
            return (playlist, t)
        }
        let start = try await library.currentToken()
        try await library.write { batch in
            try batch.insertIntoPlaylist(playlist, [t[3], t[0]], at: 1)  // 0 3 0 1 2
            #expect(try batch.playlistItems(playlist) == [t[0], t[3], t[0], t[1], t[2]])
            try batch.movePlaylistItems(playlist, from: [4, 0], to: 2)  // 3 0 2 0 1 → items 0 and 2 moved before old index 2
            #expect(try batch.playlistItems(playlist) == [t[3], t[0], t[2], t[0], t[1]])
            try batch.movePlaylistItems(playlist, from: [0], to: 5)  // to the end
            #expect(try batch.playlistItems(playlist) == [t[0], t[2], t[0], t[1], t[3]])
            try batch.removeFromPlaylist(playlist, at: [0, 3])  // one copy of t0 stays
            #expect(try batch.playlistItems(playlist) == [t[2], t[0], t[3]])
            try batch.insertIntoPlaylist(playlist, [t[4]], at: 3)  // append
        }
        #expect(try await library.playlistItems(playlist) == [t[2], t[0], t[3], t[4]])
        // Bad positions are typed errors, and the batch leaves nothing behind.
        await #expect(throws: LibraryError.self) {
            try await library.write { batch in
                try batch.removeFromPlaylist(playlist, at: [0])
                try batch.movePlaylistItems(playlist, from: [9], to: 0)
            }
        }
        #expect(try await library.playlistItems(playlist) == [t[2], t[0], t[3], t[4]])
        // The change history names the playlist's items as changed.
        let feed = try await library.changes(since: start)
        let updated = feed.changes.flatMap(\.playlists.updated)
        #expect(updated.contains { $0.id == .playlist(playlist) && $0.groups.contains(.items) })
        // A no-op edit writes nothing.
        let before = try await library.currentToken()
        try await library.write { batch in try batch.movePlaylistItems(playlist, from: [1], to: 2) }
        #expect(try await library.currentToken() == before)
    }
}
