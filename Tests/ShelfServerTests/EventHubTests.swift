import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

@testable import ShelfServer

@Suite struct EventHubTests {
    /// A client whose buffer fills and stays full is cut off once the stall limit passes; the
    /// cut is an abort (the server closes the connection), not a clean end.
    @Test func aReaderThatNeverReadsIsDropped() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-hub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = Library(directory: directory)
        let hub = EventHub(library: library, pollInterval: .milliseconds(20), clientBuffer: 512, stallLimit: .milliseconds(200))
        hub.start()
        defer { hub.close() }
        let stream = try await hub.subscribe(since: nil)
        let dropped = Locked(false)
        stream.onCancel { dropped.withLock { $0 = true } }
        // Far more change sets than 512 bytes hold; no one reads the stream.
        for index in 0..<20 {
            _ = try await library.write { batch in try batch.insert(Track(path: "/music/\(index).flac", title: "T\(index)")) }
            hub.poke()
        }
        #expect(await waitFor { dropped.withLock { $0 } })
        #expect(stream.read(max: 1 << 20, wakeup: {}) == .aborted)
        #expect(await waitFor { hub.clientCount == 0 })
    }

    /// A reader that keeps reading gets every change set in order, however small its buffer.
    @Test func aReaderThatReadsGetsEveryChange() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-hub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = Library(directory: directory)
        // No stall limit to speak of: this test is about order, and under a loaded test run this
        // task can wait a long time for a thread, which must not count as a slow reader.
        let hub = EventHub(library: library, pollInterval: .milliseconds(20), clientBuffer: 512, stallLimit: .seconds(86_400))
        hub.start()
        defer { hub.close() }
        let start = try await library.currentToken()
        let stream = try await hub.subscribe(since: start)
        for index in 0..<20 {
            _ = try await library.write { batch in try batch.insert(Track(path: "/music/\(index).flac", title: "T\(index)")) }
        }
        let expected = try await library.changes(since: start).changes.map(\.token.description)
        var text = ""
        while text.components(separatedBy: "event: change").count - 1 < expected.count {
            switch stream.read(max: 4096, wakeup: {}) {
            case .data(let data): text += String(decoding: data, as: UTF8.self)
            case .pending: try await Task.sleep(for: .milliseconds(5))
            case .end, .aborted:
                Issue.record("the stream ended early")
                return
            }
        }
        let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }.dropFirst()
        #expect(Array(ids) == expected)
        stream.cancel()
    }

    /// A scan's progress goes to every client as `scan` events without `id:` lines, so a client's
    /// resume point stays the change token; change events keep coming around them; a client
    /// connecting mid-scan hears where it is, and one connecting after a scan does not hear it again.
    @Test func scanEventsReachClientsWithoutMovingTheirResumePoint() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-hub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = Library(directory: directory)
        let hub = EventHub(library: library, pollInterval: .milliseconds(20), clientBuffer: 1 << 16, stallLimit: .seconds(86_400))
        hub.start()
        defer { hub.close() }
        let first = try await hub.subscribe(since: nil)
        var firstText = ""
        // Reads `stream` until `text` holds `count` occurrences of `marker`.
        func read(_ stream: ByteStream, into text: inout String, until marker: String, count: Int = 1) async throws {
            while text.components(separatedBy: marker).count - 1 < count {
                switch stream.read(max: 4096, wakeup: {}) {
                case .data(let data): text += String(decoding: data, as: UTF8.self)
                case .pending: try await Task.sleep(for: .milliseconds(5))
                case .end, .aborted:
                    Issue.record("the stream ended early")
                    return
                }
            }
        }
        try await read(first, into: &firstText, until: "event: ready")
        hub.publishScan(Data("{\"state\":\"running\",\"done\":1,\"total\":3}".utf8), running: true)
        try await read(first, into: &firstText, until: "\"done\":1")
        // A client arriving now hears the running scan at once.
        let second = try await hub.subscribe(since: nil)
        var secondText = ""
        try await read(second, into: &secondText, until: "\"done\":1")
        _ = try await library.write { batch in try batch.insert(Track(path: "/music/a.flac", title: "A")) }
        try await read(first, into: &firstText, until: "event: change")
        hub.publishScan(Data("{\"state\":\"finished\",\"done\":3,\"total\":3}".utf8), running: false)
        try await read(first, into: &firstText, until: "\"finished\"")
        try await read(second, into: &secondText, until: "\"finished\"")
        for text in [firstText, secondText] {
            let events = text.components(separatedBy: "\n\n").filter { $0.contains("event: scan") }
            #expect(events.count >= 2, "\(text)")
            #expect(events.allSatisfy { !$0.contains("id: ") }, "\(text)")
        }
        #expect(firstText.components(separatedBy: "event: scan").count - 1 == 2)  // each status once
        // One arriving after the scan ended starts quiet: its first events are ready, then the next change.
        let third = try await hub.subscribe(since: nil)
        var thirdText = ""
        try await read(third, into: &thirdText, until: "event: ready")
        _ = try await library.write { batch in try batch.insert(Track(path: "/music/b.flac", title: "B")) }
        try await read(third, into: &thirdText, until: "event: change")
        #expect(!thirdText.contains("event: scan"), "\(thirdText)")
        for stream in [first, second, third] { stream.cancel() }
    }
}

/// Polls `condition` until it holds, for up to a minute (a bound for a broken test, not a
/// synchronization: the condition is a state the code under test reaches on its own).
func waitFor(_ condition: @Sendable () -> Bool) async -> Bool {
    for _ in 0..<3_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
