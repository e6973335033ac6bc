import Dispatch
import Foundation

/// `items.map(transform)` on every core, in the items' order: the CPU-bound halves of imports
/// and mirror builds (tag parsing, sort keys and search tokens). At most `maximumParts` parts
/// (one per core by default) of at least `minimumPerPart` items; more parts than cores are
/// handed to the cores as they free up, which balances items of uneven cost.
public func parallelMap<T, R>(
    _ items: [T], minimumPerPart: Int = 1, maximumParts: Int = ProcessInfo.processInfo.activeProcessorCount,
    _ transform: @Sendable (T) -> R
) -> [R] {
    let parts = min(max(1, maximumParts), max(1, items.count / max(1, minimumPerPart)))
    guard parts > 1 else { return items.map(transform) }
    let slots = Locked([[R]](repeating: [], count: parts))
    // The items are only read, each part its own range, while concurrentPerform runs.
    nonisolated(unsafe) let items = items
    DispatchQueue.concurrentPerform(iterations: parts) { part in
        let range = (items.count * part / parts)..<(items.count * (part + 1) / parts)
        let mapped = items[range].map(transform)
        slots.withLock { $0[part] = mapped }
    }
    return slots.withLock { $0.flatMap { $0 } }
}
