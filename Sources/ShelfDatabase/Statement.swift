import CSQLite
import Foundation

/// A prepared statement. Obtained from `Connection.cachedStatement(_:)` or `Connection.prepare(_:)`
/// and, like its connection, used by one executor at a time.
public final class Statement {
    /// The SQL text it was prepared from.
    public let sql: String
    let handle: OpaquePointer
    unowned let connection: Connection
    private var finalized = false

    init(connection: Connection, sql: String, persistent: Bool) throws {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, flags, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.lastError(sql: sql)
        }
        self.sql = sql
        self.handle = statement
        self.connection = connection
    }

    deinit { finalize() }

    func finalize() {
        guard !finalized else { return }
        finalized = true
        sqlite3_finalize(handle)
    }

    /// The number of `?` parameters.
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Resets the statement and binds `arguments` to its parameters, in order.
    public func bind(_ arguments: [(any SQLiteBindable)?]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard arguments.count == parameterCount else {
            throw SQLiteError.misuse("expected \(parameterCount) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            if let argument { try argument.bind(to: self, at: index) } else { try bindNull(at: index) }
        }
    }

    /// Resets the statement so that it can run again; bindings are cleared too.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw connection.lastError(sql: sql) }
    }

    /// Binds NULL at a 1-based parameter index.
    public func bindNull(at index: Int32) throws { try check(sqlite3_bind_null(handle, index)) }
    /// Binds an integer at a 1-based parameter index.
    public func bind(_ value: Int64, at index: Int32) throws { try check(sqlite3_bind_int64(handle, index, value)) }
    /// Binds a double at a 1-based parameter index.
    public func bind(_ value: Double, at index: Int32) throws { try check(sqlite3_bind_double(handle, index, value)) }
    /// Binds UTF-8 text at a 1-based parameter index (SQLite copies it).
    public func bind(_ value: String, at index: Int32) throws {
        // An empty string still needs a non-NULL pointer, or SQLite would bind NULL.
        if value.isEmpty { return try check(sqlite3_bind_text(handle, index, "", 0, shelf_sqlite_transient())) }
        var value = value
        let rc = value.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), shelf_sqlite_transient())
            }
        }
        try check(rc)
    }
    /// Binds a blob at a 1-based parameter index (SQLite copies it).
    public func bind(_ value: Data, at index: Int32) throws {
        let rc = value.withUnsafeBytes { buffer in
            sqlite3_bind_blob(
                handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                shelf_sqlite_transient())
        }
        try check(rc)
    }

    /// Binds any bindable value, or NULL for nil, at a 1-based parameter index. Generic rather than
    /// existential, so hot insert loops bind without boxing each value.
    @inlinable
    public func bind<T: SQLiteBindable>(optional value: T?, at index: Int32) throws {
        if let value { try value.bind(to: self, at: index) } else { try bindNull(at: index) }
    }

    /// Steps once; returns true when a row is available. A failed step evicts the statement from
    /// the cache, because SQLite documents a statement as untrustworthy after such a failure.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(sql: sql)
            sqlite3_reset(handle)
            connection.evict(self)
            throw error
        }
    }

    /// The current row after `step()` returned true; valid until the next step or reset.
    public var currentRow: Row { Row(statement: self) }

    /// Runs the statement to completion, ignoring rows, then resets it.
    public func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the statement and calls `body` with each row; the row is only valid inside `body`.
    public func forEach(_ body: (Row) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        let row = Row(statement: self)
        while try step() { try body(row) }
    }

    /// Runs the statement and decodes every row with `decode`.
    public func map<T>(_ decode: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEach { result.append(try decode($0)) }
        return result
    }

    /// The column names of the result.
    public var columnNames: [String] {
        (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }
}
