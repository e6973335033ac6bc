import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Live change events as server-sent events. Every client reads the persistent change feed from
/// its own token, so a reconnect with `Last-Event-ID` gets exactly what it missed, none lost and
/// none repeated, whoever wrote it. The hub only wakes clients: it watches the library's change
/// token (a write from another process shows there too) and bumps a generation when it moves.
public final class EventHub: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var closed = false
        var clients = 0
        /// The latest scan (import) status, numbered so that each client sends each one at most once.
        var scan: (sequence: UInt64, json: Data, running: Bool)?
    }

    private let library: Library
    private let state = Locked(State())
    private let poller = Locked<Task<Void, Never>?>(nil)
    /// How often the change token is checked for writes from other processes.
    public let pollInterval: Duration
    /// How often an idle stream gets a keep-alive comment.
    public let keepAlive: Duration
    /// Bytes that may wait for a client.
    public let clientBuffer: Int
    /// How long a client may leave a full buffer unread before it is dropped.
    public let stallLimit: Duration

    /// A hub over `library`'s change feed.
    public init(
        library: Library, pollInterval: Duration = .milliseconds(250), keepAlive: Duration = .seconds(15), clientBuffer: Int = 1 << 20,
        stallLimit: Duration = .seconds(10)
    ) {
        self.library = library
        self.pollInterval = pollInterval
        self.keepAlive = keepAlive
        self.clientBuffer = clientBuffer
        self.stallLimit = stallLimit
    }

    /// Clients connected now.
    public var clientCount: Int { state.withLock { $0.clients } }

    /// Starts watching the change token.
    public func start() {
        poller.withLock { poller in
            guard poller == nil else { return }
            poller = Task { [weak self] in
                var last: ChangeToken?
                while !Task.isCancelled {
                    guard let self else { return }
                    if let token = try? await self.library.currentToken(), token != last {
                        if last != nil { self.poke() }
                        last = token
                    }
                    try? await Task.sleep(for: self.pollInterval)
                }
            }
        }
    }

    /// Wakes every client to read the feed (after a write this server made, without waiting for the poll).
    public func poke() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Publishes a scan's (an import's) status as a `scan` event to every client. Clients get the
    /// latest status, not every one: a slow reader skips to where the scan is now. The event has
    /// no `id:`, so a client's `Last-Event-ID` stays the change token it resumes from.
    public func publishScan(_ json: Data, running: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.scan = ((state.scan?.sequence ?? 0) + 1, json, running)
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends every stream (the server is stopping) and stops watching.
    public func close() {
        poller.withLock { $0?.cancel() }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private var isClosed: Bool { state.withLock { $0.closed } }
    private var generation: UInt64 { state.withLock { $0.generation } }

    /// Waits until the generation passes `seen`, the hub closes, `timeout` passes or `stream` is
    /// cancelled, whichever is first.
    private func wait(after seen: UInt64, timeout: Duration, stream: ByteStream) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let wake: @Sendable () -> Void = { [weak self] in
            let waiter = self?.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            wake()
        }
        stream.onCancel(wake)
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.closed || state.generation != seen || stream.isCancelled { return true }
                state.waiters[id] = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }

    /// One SSE event: `id:` the token after the change, `event:` its kind, `data:` one line of JSON.
    static func event(id: String?, name: String, json: Data) -> Data {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\ndata: "
        var data = Data(text.utf8)
        data.append(json)
        data.append(contentsOf: Array("\n\n".utf8))
        return data
    }

    /// The stream for a client resuming after `since` (its `Last-Event-ID`), or from now;
    /// `viewer`, when given, hears of their own play queue and no one else's.
    public func subscribe(since: ChangeToken?, viewer: UserID? = nil) async throws -> ByteStream {
        let start = if let since { since } else { try await library.currentToken() }
        let stream = ByteStream(capacity: clientBuffer)
        state.withLock { $0.clients += 1 }
        Task { [self] in
            await self.run(stream, from: start, viewer: viewer)
            self.state.withLock { $0.clients -= 1 }
        }
        return stream
    }

    private func run(_ stream: ByteStream, from start: ChangeToken, viewer: UserID?) async {
        var token = start
        // A client arriving while a scan runs hears where it is; one arriving after hears of the next.
        var scanSent = state.withLock { state in state.scan.map { $0.running ? 0 : $0.sequence } ?? 0 }
        // Tells the client where it stands, so even a quiet stream has an ID to resume from.
        // Each client has its own task: one that stops reading waits here alone, then is dropped.
        let send: (Data) async -> Bool = { data in await stream.write(data, within: self.stallLimit) }
        guard await send(Data("retry: 2000\n".utf8) + Self.event(id: token.description, name: "ready", json: Data("{\"token\":\"\(token)\"}".utf8))) else {
            return
        }
        while !stream.isCancelled && !isClosed {
            let seen = generation
            if let scan = state.withLock({ $0.scan }), scan.sequence > scanSent {
                guard await send(Self.event(id: nil, name: "scan", json: scan.json)) else { return }
                scanSent = scan.sequence
            }
            do {
                let feed = try await library.changes(since: token, limit: 200)
                for change in feed.changes {
                    // Only another user's queue changed: nothing of this client's to tell.
                    let seen = change.seen(by: viewer)
                    if seen.isEmpty, !change.isEmpty { continue }
                    let json = try Wire.encode(seen)
                    guard await send(Self.event(id: change.token.description, name: "change", json: json)) else { return }
                }
                token = feed.token
                if feed.hasMore { continue }
            } catch let error as LibraryError where error.kind == .expired {
                // One event telling the client to refetch; it resumes from the current token.
                guard let current = try? await library.currentToken() else { break }
                let json = (try? Wire.encode(ErrorDocument(code: "tokenExpired", message: error.description))) ?? Data()
                guard await send(Self.event(id: current.description, name: "tokenExpired", json: json)) else { return }
                token = current
                continue
            } catch {
                break
            }
            await wait(after: seen, timeout: keepAlive, stream: stream)
            if generation == seen, !stream.isCancelled, !isClosed {
                guard await send(Data(": keep-alive\n\n".utf8)) else { return }
            }
        }
        stream.finish()
    }
}
