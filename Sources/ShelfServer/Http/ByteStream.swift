import Foundation
import ShelfCore

/// A bounded pipe of bytes from a producer (an event feed, ffmpeg's output) to one client
/// connection. The server pulls from it when the socket can take more; a producer either waits for
/// room (`write`, for a transcode, so ffmpeg is slowed to the client's pace) or is refused when
/// the buffer is full (`offer`, for events, so one client that stops reading is dropped without
/// holding anyone else). When the client goes away the stream is cancelled: writes fail from then
/// on and every `onCancel` handler runs once.
public final class ByteStream: @unchecked Sendable {
    /// What the server gets when it asks for bytes.
    public enum Chunk: Sendable, Equatable {
        /// Up to the asked number of bytes.
        case data(Data)
        /// Nothing yet: the server parks the connection and `wakeup` runs when there is.
        case pending
        /// The producer finished: the response is complete.
        case end
        /// The stream was cancelled before it finished (the reader was too slow, or the producer
        /// failed): the server closes the connection, so the client cannot take the cut-off
        /// response for a whole one.
        case aborted
    }

    private struct State {
        var buffer = Data()
        var finished = false
        var cancelled = false
        var wakeup: (@Sendable () -> Void)?
        var spaceWaiters: [CheckedContinuation<Void, Never>] = []
        var cancelHandlers: [@Sendable () -> Void] = []
        var sent: UInt64 = 0
    }

    /// At most this many bytes wait in the buffer.
    public let capacity: Int
    /// The exact length the response declares (`Content-Length`), or nil for a chunked one. A
    /// producer's bytes past it are dropped (its write then fails, so it stops), and a stream
    /// finished short of it is completed with zero bytes: the client was promised that many.
    public let length: UInt64?
    // `@unchecked Sendable`: every mutable field lives in `state`, reached only under its lock.
    private let state = Locked(State())

    /// A stream that buffers at most `capacity` bytes and, with `length`, sends exactly that many.
    public init(capacity: Int = 256 * 1024, length: UInt64? = nil) {
        self.capacity = max(capacity, 1)
        self.length = length
    }

    /// Appends `data`, waiting while the buffer is full; false once the stream is cancelled.
    public func write(_ data: Data) async -> Bool {
        enum Step {
            case wrote((@Sendable () -> Void)?)
            case full, closed
        }
        var offset = 0
        if let length {
            let taken = state.withLock { $0.sent + UInt64($0.buffer.count) }
            let allowed = taken >= length ? 0 : Int(min(UInt64(data.count), length - taken))
            if allowed < data.count {
                // The rest would pass the declared length: what fits is written, and the write
                // fails so that the producer stops.
                if allowed > 0 { _ = await write(data.prefix(allowed)) }
                return false
            }
        }
        while offset < data.count {
            let step = state.withLock { state -> Step in
                if state.cancelled || state.finished { return .closed }
                let room = capacity - state.buffer.count
                if room <= 0 { return .full }
                let end = min(data.count, offset + room)
                state.buffer.append(data[data.startIndex + offset..<data.startIndex + end])
                offset = end
                defer { state.wakeup = nil }
                return .wrote(state.wakeup)
            }
            switch step {
            case .closed: return false
            case .wrote(let wake): wake?()
            case .full:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.cancelled || state.finished || state.buffer.count < capacity { return true }
                        state.spaceWaiters.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
        return true
    }

    /// Appends `data`, waiting at most `limit` for room; a reader that has not made room by then
    /// is too slow, and the stream is cancelled (false).
    public func write(_ data: Data, within limit: Duration) async -> Bool {
        let finished = Locked(false)
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            if !finished.withLock({ $0 }) { self?.cancel() }
        }
        let written = await write(data)
        finished.withLock { $0 = true }
        timer.cancel()
        return written
    }

    /// Appends `data` at once if it fits; otherwise cancels the stream (the reader is too slow)
    /// and returns false.
    @discardableResult
    public func offer(_ data: Data) -> Bool {
        let (wake, accepted) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
            if state.cancelled || state.finished { return (nil, false) }
            if state.buffer.count + data.count > capacity { return (nil, false) }
            state.buffer.append(data)
            defer { state.wakeup = nil }
            return (state.wakeup, true)
        }
        wake?()
        if !accepted { cancel() }
        return accepted
    }

    /// Ends the stream after what is buffered has been sent.
    public func finish() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.finished = true
            defer { state.wakeup = nil }
            return state.wakeup
        }
        wake?()
    }

    /// Cancels the stream (the client went away, or it was too slow): buffered bytes are dropped,
    /// writes fail, waiting writers return, and the cancel handlers run once.
    public func cancel() {
        let (handlers, waiters, wake) = state.withLock { state -> ([@Sendable () -> Void], [CheckedContinuation<Void, Never>], (@Sendable () -> Void)?) in
            guard !state.cancelled else { return ([], [], nil) }
            state.cancelled = true
            state.buffer = Data()
            defer {
                state.cancelHandlers = []
                state.spaceWaiters = []
                state.wakeup = nil
            }
            return (state.cancelHandlers, state.spaceWaiters, state.wakeup)
        }
        for waiter in waiters { waiter.resume() }
        wake?()
        for handler in handlers { handler() }
    }

    /// Runs `handler` when the stream is cancelled (at once if it already is).
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.cancelHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Whether the client is gone.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Bytes handed to the server so far.
    public var bytesSent: UInt64 { state.withLock { $0.sent } }

    /// For the server: takes up to `max` bytes, or arms `wakeup` (run once, on any thread) and
    /// answers `.pending` when the buffer is empty, `.end` when the stream is over, or `.aborted` when it was cancelled.
    public func read(max: Int, wakeup: @escaping @Sendable () -> Void) -> Chunk {
        let (chunk, waiters) = state.withLock { state -> (Chunk, [CheckedContinuation<Void, Never>]) in
            if state.cancelled { return (.aborted, []) }
            if state.buffer.isEmpty {
                if state.finished, let length, state.sent < length {
                    // Finished short of the declared length: zeros make up the rest.
                    let count = Int(Swift.min(UInt64(max), length - state.sent))
                    state.sent += UInt64(count)
                    return (.data(Data(count: count)), [])
                }
                if state.finished { return (.end, []) }
                state.wakeup = wakeup
                return (.pending, [])
            }
            let count = Swift.min(max, state.buffer.count)
            let piece = state.buffer.prefix(count)
            state.buffer.removeFirst(count)
            state.sent += UInt64(count)
            defer { state.spaceWaiters = [] }
            return (.data(Data(piece)), state.spaceWaiters)
        }
        // Room was made: the writers waiting for it retry.
        for waiter in waiters { waiter.resume() }
        return chunk
    }
}
