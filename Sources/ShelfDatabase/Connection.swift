import CSQLite
import Foundation

/// One SQLite connection: open flags, pragmas, the busy timeout, a statement cache, and hooks.
///
/// A `Connection` is deliberately not `Sendable`: it is owned by one executor at a time (the
/// library's global actor for the writer, one pooled reader for a read). SQLite is opened in
/// multi-thread mode (`SQLITE_OPEN_NOMUTEX`) because that ownership already rules out concurrent
/// use of one handle, so SQLite's per-call mutex would be pure cost.
public final class Connection {
    /// How a connection opens its file.
    public enum Mode: Sendable {
        /// Read and write; create the file when `create` is true.
        case readWrite(create: Bool)
        /// Read only; for pooled WAL readers.
        case readOnly
    }

    /// The database file path (or `:memory:`).
    public let path: String
    /// The raw handle, for the rare call this layer does not wrap.
    public let handle: OpaquePointer
    var statementCache: [String: Statement] = [:]
    var savepointDepth = 0
    var hooks = HookBoxes()

    /// Opens `path` in `mode`, with a busy timeout in milliseconds.
    public init(path: String, mode: Mode = .readWrite(create: true), busyTimeoutMilliseconds: Int32 = 5_000) throws {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWrite(let create): flags |= SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            let systemErrno = db.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(db)
            throw SQLiteError(extendedCode: extended, message: message, path: path, systemErrno: systemErrno)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        for statement in statementCache.values { statement.finalize() }
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Changes how long a statement waits for another connection's lock before failing with `.busy`.
    public func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs one or more SQL statements that take no arguments and return no rows (schema, pragmas).
    public func execute(script sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(
                extendedCode: sqlite3_extended_errcode(handle), message: message, sql: sql, path: path, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// Runs one statement with bound arguments through the statement cache, ignoring any rows.
    public func execute(_ sql: String, _ arguments: [(any SQLiteBindable)?] = []) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.run()
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// True while a transaction is open (SQLite is not in autocommit mode).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Reads a pragma's single value, e.g. `pragma("user_version")`.
    public func pragma(_ name: String) throws -> String? {
        try queryOne("PRAGMA \(name)") { $0.isNull(0) ? nil : try $0.string(0) } ?? nil
    }

    /// The error SQLite reports for the last failed call, with `sql` attached.
    func lastError(sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
            sql: sql, path: path, systemErrno: sqlite3_system_errno(handle))
    }
}
