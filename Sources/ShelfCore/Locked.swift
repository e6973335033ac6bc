import Foundation

/// A value shared between threads, reached only while holding its lock: Shelf's replacement for
/// Synchronization's `Mutex`, with the same `withLock` shape.
///
/// The lock is a pthread mutex (NSLock) because ThreadSanitizer sees pthread locks but not the
/// Linux futex behind `Mutex`: with `Mutex`, `make tsan` reported every guarded access made on two
/// threads as a race, which hid the real ones. `@unchecked Sendable`: `value` is read and written
/// only inside `withLock`, under `lock`.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
