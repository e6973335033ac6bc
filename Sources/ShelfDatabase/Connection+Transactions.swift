import CSQLite
import Foundation

extension Connection {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes the read lock at the first read, the write lock at the first write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so a writer never fails half-way with `SQLITE_BUSY`.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Nested calls become savepoints, so a helper may open a transaction without knowing
    /// whether its caller already has one.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try transaction(kind, whileCommitting: nil, body)
    }

    /// The same, with `whileCommitting` run on the calling thread while COMMIT runs on another:
    /// a durable COMMIT mostly waits for the disk, and other work (keeping a derived database
    /// current) can use that time. `whileCommitting` must not touch this connection; it runs
    /// only when `body` succeeded, and a COMMIT that then fails still rolls back and throws, so
    /// the caller must undo what `whileCommitting` did. Inside an enclosing transaction (a
    /// savepoint) nothing is committed yet, so it simply runs after the savepoint is released.
    public func transaction<T>(_ kind: TransactionKind, whileCommitting: (() -> Void)?, _ body: () throws -> T) throws -> T {
        if isInTransaction {
            let result = try savepoint(body)
            whileCommitting?()
            return result
        }
        // Cached like any statement: a read of a few rows should not pay to parse BEGIN and COMMIT.
        try cachedStatement("BEGIN \(kind.rawValue)").run()
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            let commit = try cachedStatement("COMMIT")
            if let whileCommitting {
                try commitAlongside(commit, whileCommitting)
            } else {
                try commit.run()
            }
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
    }

    /// Runs `commit` on a dispatch thread and `work` on this one, then waits for the commit.
    private func commitAlongside(_ commit: Statement, _ work: () -> Void) throws {
        // The connection is not Sendable: it crosses to the other thread in a box, which is safe
        // because this thread does not use it until the semaphore says the commit is done.
        final class Handoff: @unchecked Sendable {
            let commit: Statement
            var outcome: Result<Void, any Error> = .success(())
            let done = DispatchSemaphore(value: 0)
            init(_ commit: Statement) { self.commit = commit }
        }
        let handoff = Handoff(commit)
        DispatchQueue.global(qos: .userInitiated).async {
            handoff.outcome = Result { try handoff.commit.run() }
            handoff.done.signal()
        }
        work()
        handoff.done.wait()
        try handoff.outcome.get()
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back (and released) when it
    /// throws, leaving the enclosing transaction open and intact.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        let name = "shelf_sp\(savepointDepth)"
        defer { savepointDepth -= 1 }
        try cachedStatement("SAVEPOINT \(name)").run()
        let result: T
        do {
            result = try body()
        } catch {
            // Rolling back to the savepoint undoes its work; RELEASE then removes it. When SQLite
            // has already rolled the whole transaction back (e.g. SQLITE_FULL), both fail harmlessly.
            try? execute(script: "ROLLBACK TO \(name)")
            try? execute(script: "RELEASE \(name)")
            throw error
        }
        try cachedStatement("RELEASE \(name)").run()
        return result
    }

    private func rollbackQuietly() {
        if isInTransaction { try? execute(script: "ROLLBACK") }
    }
}
