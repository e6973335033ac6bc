import Dispatch
import Foundation

/// The global actor that owns every library's write connection and serializes all writes (seed 003:
/// one database, so one queue of operations, whichever `Library` value asks).
///
/// Its executor is a dedicated serial dispatch queue rather than the cooperative pool: SQLite calls
/// block their thread, and a long import on a 2-core machine must not starve the pool that runs
/// every other task.
@globalActor
public actor LibraryActor {
    /// The single instance.
    public static let shared = LibraryActor()

    static let executor = QueueExecutor(label: "shelf.library-actor")

    public nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
}

/// A serial executor that runs jobs on one dispatch queue.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label, qos: .userInitiated) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
