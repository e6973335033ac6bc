import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite struct ConcurrencyTests {
    @Test func readsAnswerWhileALongWriteTransactionIsOpen() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { batch in for n in 0..<100 { try batch.insert(sampleTrack(n)) } }

        let writeOpen = DispatchSemaphore(value: 0)
        let releaseWrite = DispatchSemaphore(value: 0)
        let writer = Task {
            try await library.write { batch in
                try batch.insert(sampleTrack(1_000))
                writeOpen.signal()
                // Hold the write transaction (and LibraryActor) until the reads are done.
                _ = releaseWrite.wait(timeout: .now() + 30)
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                writeOpen.wait()
                continuation.resume()
            }
        }
        // While the write holds its transaction, reads are answered from the last committed state.
        // Had they waited behind it, they would see 101 tracks: the write commits only when
        // released, after the reads returned (or after the 30 s safety timeout).
        async let info = library.info()
        async let page = library.page(LibraryQuery(sort: .title), offset: 0, limit: 10)
        async let one = library.track(1)
        let (i, p, t) = try await (info, page, one)
        #expect(i.trackCount == 100)
        #expect(p.total == 100)
        #expect(t != nil)
        releaseWrite.signal()
        try await writer.value
        #expect(try await library.info().trackCount == 101)
    }

    @Test func concurrentWritersAreSerializedAndAllCommit() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for n in 0..<10 {
                        try await library.write { try $0.insert(sampleTrack(worker * 100 + n)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await library.info().trackCount == 80)
        let log = try await library.changeLog()
        #expect(log.count == 80)
        #expect(Set(log.map(\.transaction)).count == 80)
        #expect(log.map(\.seq) == log.map(\.seq).sorted())
    }

    @Test func listingTracksNeverReadsTheArtworkTable() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { batch in
            let art = try batch.addArtwork(Data(repeating: 1, count: 10_000))
            for n in 0..<20 {
                var track = sampleTrack(n)
                track.artworkID = art
                try batch.insert(track)
            }
        }
        let statements = Locked<[String]>([])
        try await library.setReadTraceHandler { sql in statements.withLock { $0.append(sql) } }
        let page = try await library.page(LibraryQuery(sort: .artist), offset: 0, limit: 20)
        _ = try await library.track(page.items[0].id)
        _ = try await library.sections(LibraryQuery(sort: .title))
        _ = try await library.snapshot(LibraryQuery(sort: .album, filter: .flag(.hasArtwork, true)))
        _ = try await library.list(LibraryQuery(sort: .genre, filter: .anyText("a")), limit: 5)
        try await library.setReadTraceHandler(nil)
        let allHaveArtwork = page.items.allSatisfy { $0.hasArtwork }
        #expect(allHaveArtwork)
        let traced = statements.withLock { $0 }
        #expect(!traced.isEmpty)
        let db = try Connection(path: library.storeURL.path, mode: .readOnly)
        for sql in traced where !sql.hasPrefix("BEGIN") && !sql.hasPrefix("COMMIT") {
            let tables = try db.tablesRead(by: sql)
            #expect(!tables.contains("artwork"), "\(sql) read the artwork table")
        }
    }
}
