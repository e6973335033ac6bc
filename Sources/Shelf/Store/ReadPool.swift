import Dispatch
import Foundation
import ShelfDatabase

/// A small pool of read-only connections. WAL lets each read see a consistent snapshot while the
/// writer commits, so reads run on their own threads and never queue behind `LibraryActor`.
final class ReadPool: @unchecked Sendable {
    // `lock` protects `idle` and `opened`; a connection is used by one read at a time, between
    // being taken from `idle` and put back.
    private let lock = NSLock()
    private var idle: [Connection] = []
    private var opened = 0
    private let available: DispatchSemaphore
    private let queue = DispatchQueue(label: "shelf.read", qos: .userInitiated, attributes: .concurrent)
    let path: String
    let size: Int
    private let busyTimeoutMilliseconds: Int32

    init(path: String, size: Int, busyTimeoutMilliseconds: Int32) {
        self.path = path
        self.size = max(1, size)
        self.available = DispatchSemaphore(value: max(1, size))
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    /// Runs `body` with a pooled connection on a reader thread; `body` converts rows into values,
    /// so nothing of the connection escapes.
    func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.readNow(body) })
            }
        }
    }

    /// The synchronous form of `read`, for callers already off the cooperative pool.
    func readNow<T>(_ body: (Connection) throws -> T) throws -> T {
        available.wait()
        defer { available.signal() }
        let connection = try take()
        defer { give(connection) }
        return try body(connection)
    }

    private func take() throws -> Connection {
        lock.lock()
        if let connection = idle.popLast() {
            lock.unlock()
            return connection
        }
        opened += 1
        let handler = traceHandler
        lock.unlock()
        do {
            let connection = try Connection(path: path, mode: .readOnly, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            if let handler { connection.setTraceHandler(handler) }
            return connection
        } catch {
            lock.lock()
            opened -= 1
            lock.unlock()
            throw error
        }
    }

    private func give(_ connection: Connection) {
        // A read that left a transaction open would pin an old snapshot and stall checkpoints.
        if connection.isInTransaction { try? connection.execute(script: "ROLLBACK") }
        lock.lock()
        idle.append(connection)
        lock.unlock()
    }

    /// Installs (or with nil removes) a trace handler on every pooled connection, present and future.
    func setTraceHandler(_ handler: (@Sendable (String) -> Void)?) {
        lock.lock()
        traceHandler = handler
        for connection in idle { connection.setTraceHandler(handler) }
        lock.unlock()
    }
    private var traceHandler: (@Sendable (String) -> Void)?
}
