import CSQLite
import Foundation

extension Connection {
    /// A statement prepared once per connection and reused, keyed by its SQL text.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: self, sql: sql, persistent: true)
        statementCache[sql] = statement
        return statement
    }

    /// A fresh statement, not cached; finalized when released.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql, persistent: false)
    }

    /// Drops a statement from the cache after a failed step.
    func evict(_ statement: Statement) {
        if let cached = statementCache[statement.sql], cached === statement {
            statementCache[statement.sql] = nil
        }
    }

    /// The number of statements in the cache.
    public var cachedStatementCount: Int { statementCache.count }

    /// Runs a query and decodes every row with `decode`.
    public func query<T>(_ sql: String, _ arguments: [(any SQLiteBindable)?] = [], _ decode: (Row) throws -> T) throws -> [T] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        return try statement.map(decode)
    }

    /// Runs a query and decodes its first row, or returns nil when there is none.
    public func queryOne<T>(_ sql: String, _ arguments: [(any SQLiteBindable)?] = [], _ decode: (Row) throws -> T) throws -> T? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        return try statement.step() ? decode(Row(statement: statement)) : nil
    }

    /// Runs a query and calls `body` with each row, without building an array.
    public func forEachRow(_ sql: String, _ arguments: [(any SQLiteBindable)?] = [], _ body: (Row) throws -> Void) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.forEach(body)
    }

    /// The first column of every row as integers (NULL reads as 0), read straight from SQLite:
    /// for long ID lists, where a decode closure per row would cost more than the step.
    public func int64Column(_ sql: String, _ arguments: [(any SQLiteBindable)?] = [], reserving capacity: Int = 0) throws -> [Int64] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { sqlite3_reset(statement.handle) }
        var values: [Int64] = []
        values.reserveCapacity(capacity)
        while try statement.step() { values.append(sqlite3_column_int64(statement.handle, 0)) }
        return values
    }

    /// Decodes every row into a `RowDecodable` value.
    public func fetchAll<T: RowDecodable>(_ type: T.Type, _ sql: String, _ arguments: [(any SQLiteBindable)?] = []) throws -> [T] {
        try query(sql, arguments) { try T(row: $0) }
    }

    /// Decodes the first row into a `RowDecodable` value, or nil.
    public func fetchOne<T: RowDecodable>(_ type: T.Type, _ sql: String, _ arguments: [(any SQLiteBindable)?] = []) throws -> T? {
        try queryOne(sql, arguments) { try T(row: $0) }
    }

    /// Reads a single value (the first column of the first row), or nil when there is no row.
    public func scalar<T: SQLiteColumnDecodable>(_ type: T.Type, _ sql: String, _ arguments: [(any SQLiteBindable)?] = []) throws -> T? {
        try queryOne(sql, arguments) { try $0.get(0, as: T.self) }
    }
}
