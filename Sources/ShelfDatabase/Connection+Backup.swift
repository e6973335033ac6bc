import CSQLite
import Foundation

extension Connection {
    /// Copies this connection's `main` database into `destination` with SQLite's online backup
    /// API, `pagesPerStep` pages at a time, calling `progress(copied, total)` after each step.
    ///
    /// The copy is one snapshot: a read transaction is held on this connection for the whole
    /// copy, so writers in other connections and processes go on, and none of their commits
    /// after the first step reaches the copy (SQLite restarts a backup whose source changed only
    /// when the change is visible to the source connection, which the open snapshot rules out).
    public func backup(
        into destination: Connection, pagesPerStep: Int32 = 1_024, progress: (_ copied: Int, _ total: Int) throws -> Void = { _, _ in }
    ) throws {
        try execute(script: "BEGIN DEFERRED")
        defer { try? execute(script: "COMMIT") }
        // A deferred BEGIN takes its snapshot at the first read, so read now, before any step.
        _ = try scalar(Int.self, "SELECT count(*) FROM sqlite_master")
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw SQLiteError(
                extendedCode: sqlite3_extended_errcode(destination.handle), message: String(cString: sqlite3_errmsg(destination.handle)),
                path: destination.path)
        }
        var finished = false
        defer { if !finished { sqlite3_backup_finish(backup) } }
        while true {
            let rc = sqlite3_backup_step(backup, max(pagesPerStep, 1))
            let total = Int(sqlite3_backup_pagecount(backup))
            let copied = total - Int(sqlite3_backup_remaining(backup))
            switch rc {
            case SQLITE_OK:
                try progress(copied, total)
            case SQLITE_DONE:
                try progress(copied, total)
                finished = true
                let finish = sqlite3_backup_finish(backup)
                guard finish == SQLITE_OK else {
                    throw SQLiteError(
                        extendedCode: sqlite3_extended_errcode(destination.handle),
                        message: String(cString: sqlite3_errmsg(destination.handle)), path: destination.path)
                }
                return
            case SQLITE_BUSY, SQLITE_LOCKED:
                // Only the destination can be locked here (the source holds its snapshot); wait a little.
                sqlite3_sleep(10)
            default:
                finished = true
                sqlite3_backup_finish(backup)
                // The step's code names the failure (SQLITE_FULL, SQLITE_IOERR_WRITE…); the
                // destination's message says more when it has one.
                let message = String(cString: sqlite3_errmsg(destination.handle))
                throw SQLiteError(
                    extendedCode: rc, message: message == "not an error" ? String(cString: sqlite3_errstr(rc)) : message,
                    path: destination.path, systemErrno: sqlite3_system_errno(destination.handle))
            }
        }
    }

    /// `PRAGMA integrity_check` (or the faster `quick_check`): an empty array when the database
    /// is sound, otherwise SQLite's findings (at most `limit` of them).
    public func integrityCheck(quick: Bool = false, limit: Int = 20) throws -> [String] {
        let pragma = quick ? "quick_check" : "integrity_check"
        let lines = try query("PRAGMA \(pragma)(\(max(limit, 1)))") { try $0.string(0) }
        return lines == ["ok"] ? [] : lines
    }

    /// The `errno` of the last failed system call SQLite made on this connection (ENOSPC for a
    /// full disk), or 0.
    public var systemErrno: Int32 { sqlite3_system_errno(handle) }
}
