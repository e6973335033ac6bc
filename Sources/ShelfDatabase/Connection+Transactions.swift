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
        if isInTransaction { return try savepoint(body) }
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
            try cachedStatement("COMMIT").run()
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
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
