import Dispatch
import Foundation

/// The results of a parallel map, filled slot by slot from the worker threads.
///
/// `@unchecked Sendable`: every access to `slots` holds `lock`. The lock is a pthread mutex
/// (NSLock) rather than Synchronization's `Mutex`, whose Linux futex ThreadSanitizer cannot see:
/// with it, `make tsan` reported each slot's write as a race with the final read.
private final class ParallelSlots<R>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [[R]]

    init(count: Int) { slots = Array(repeating: [], count: count) }

    func set(_ index: Int, _ values: [R]) {
        lock.lock()
        slots[index] = values
        lock.unlock()
    }

    func joined() -> [R] {
        lock.lock()
        defer { lock.unlock() }
        return slots.flatMap { $0 }
    }
}

/// `items.map(transform)` on every core, in the items' order: the CPU-bound halves of imports
/// and mirror builds (tag parsing, sort keys and search tokens). At most `maximumParts` parts
/// (one per core by default) of at least `minimumPerPart` items; more parts than cores are
/// handed to the cores as they free up, which balances items of uneven cost.
public func parallelMap<T, R>(
    _ items: [T], minimumPerPart: Int = 1, maximumParts: Int = ProcessInfo.processInfo.activeProcessorCount, _ transform: (T) -> R
) -> [R] {
    let parts = min(max(1, maximumParts), max(1, items.count / max(1, minimumPerPart)))
    guard parts > 1 else { return items.map(transform) }
    let slots = ParallelSlots<R>(count: parts)
    withoutActuallyEscaping(transform) { transform in
        nonisolated(unsafe) let transform = transform
        nonisolated(unsafe) let items = items
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let range = (items.count * part / parts)..<(items.count * (part + 1) / parts)
            slots.set(part, items[range].map(transform))
        }
    }
    return slots.joined()
}
