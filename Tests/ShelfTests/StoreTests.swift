import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

func sampleTrack(_ n: Int, artist: String = "Artist") -> Track {
    Track(
        path: "/music/\(artist)/\(n).flac", fileSize: 1_000 + Int64(n), title: "Song \(n)", artist: artist,
        album: "Album", trackNumber: n, duration: 200, dateAdded: Date(timeIntervalSince1970: 1_700_000_000))
}

@Suite struct OpeningTests {
    @Test func createsTheCurrentVersionWithAStableStoreID() async throws {
        let dir = try TemporaryDirectory()
        let info = try await Library(directory: dir.url).info()
        #expect(info.schemaVersion == 18)
        #expect(info.trackCount == 0)
        let again = try await Library(directory: dir.url).info()
        #expect(again.storeID == info.storeID)
        let db = try Connection(path: dir.path("library.sqlite").path, mode: .readOnly)
        #expect(try db.pragma("journal_mode") == "wal")
        let tables = try db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { try $0.string(0) }
        for table in [
            "artwork", "change_log", "change_transaction", "meta", "playlist", "playlist_item", "track",
            "user", "api_key", "user_session", "user_track", "playlist_owner",
        ] {
            #expect(tables.contains(table))
        }
    }

    @Test func hundredConcurrentFirstCallsOpenOnce() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { try await library.info().trackCount } }
            for try await count in group { #expect(count == 0) }
        }
        #expect(await library.opener.openCount == 1)
    }

    @Test func refusesANewerSchemaWithoutTouchingTheFile() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("library.sqlite")
        do {
            let db = try Connection(path: path.path)
            try db.execute(script: "CREATE TABLE future (x); PRAGMA user_version = \(Schema.currentVersion + 1);")
        }
        let before = try Data(contentsOf: path)
        await #expect(throws: LibraryError.newerSchema(path: path.path, found: Schema.currentVersion + 1, supported: Schema.currentVersion)) {
            try await Library(directory: dir.url).info()
        }
        #expect(try Data(contentsOf: path) == before)
    }

    @Test func refusesAGarbageFileWithoutOverwritingIt() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("library.sqlite")
        let garbage = Data(repeating: 0x5A, count: 10_000)
        try garbage.write(to: path)
        do {
            _ = try await Library(directory: dir.url).info()
            Issue.record("expected notALibrary")
        } catch let error as LibraryError {
            guard case .notALibrary(let reported, _) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(reported == path.path)
            #expect(error.description.contains(path.path))
        }
        #expect(try Data(contentsOf: path) == garbage)
    }

    @Test func refusesAnotherProgramsDatabase() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("library.sqlite")
        do {
            let db = try Connection(path: path.path)
            try db.execute(script: "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');")
        }
        await #expect(throws: LibraryError.self) { try await Library(directory: dir.url).info() }
        let db = try Connection(path: path.path, mode: .readOnly)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM contacts") == 1)
    }

    @Test func legacyVersion1AsksForMigration() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("library.sqlite")
        do {
            let db = try Connection(path: path.path)
            try db.execute(script: Schema.legacyVersion1 + "; PRAGMA user_version = 1;")
        }
        await #expect(throws: LibraryError.migrationRequired(path: path.path, from: 1)) {
            try await Library(directory: dir.url).info()
        }
    }

    @Test func directoryThatCannotBeCreatedIsAClearError() async throws {
        let dir = try TemporaryDirectory()
        // A file where a parent directory should be: fails for every user, root included.
        try Data("x".utf8).write(to: dir.path("file"))
        let target = dir.path("file/library")
        do {
            _ = try await Library(directory: target).info()
            Issue.record("expected cannotCreateDirectory")
        } catch let error as LibraryError {
            guard case .cannotCreateDirectory(let path, _) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(path == target.path)
        }
    }

    @Test func failedOpeningIsRetriedByALaterCall() async throws {
        let dir = try TemporaryDirectory()
        try Data("x".utf8).write(to: dir.path("lib"))
        let library = Library(directory: dir.path("lib"))
        await #expect(throws: LibraryError.self) { try await library.info() }
        try FileManager.default.removeItem(at: dir.path("lib"))
        #expect(try await library.info().trackCount == 0)
    }

    @Test func secondProcessHoldingTheWriteLockMakesWritesWaitThenFail() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url, configuration: .init(busyTimeoutMilliseconds: 300))
        try await library.write { try $0.insert(sampleTrack(1)) }
        let holder = try LockHolder(databasePath: library.storeURL.path)
        let start = Date()
        await #expect(throws: LibraryError.busy(path: library.storeURL.path, waitedMilliseconds: 300)) {
            try await library.write { try $0.insert(sampleTrack(2)) }
        }
        // A lower bound only: SQLite's busy handler sleeps the whole timeout before giving up, and a
        // sleep lasts at least what it asked for on any machine, so this cannot fail by being fast.
        #expect(Date().timeIntervalSince(start) >= 0.25)
        // Reads are not blocked by another process's write lock (WAL).
        #expect(try await library.info().trackCount == 1)
        holder.release()
        try await library.write { try $0.insert(sampleTrack(2)) }
        #expect(try await library.info().trackCount == 2)
    }
}
