import Foundation

/// A Swift value that can be bound to a statement parameter.
public protocol SQLiteBindable {
    /// Binds the value at a 1-based parameter index.
    func bind(to statement: Statement, at index: Int32) throws
}

/// A Swift value that can be read from a result column.
public protocol SQLiteColumnDecodable {
    /// Reads the value at a 0-based column index of the current row.
    static func decode(from row: Row, at index: Int32) throws -> Self
}

/// A type whose rows decode into values, so `Connection.fetchAll(_:_:_:)` can build them.
public protocol RowDecodable {
    /// Builds the value from the current row.
    init(row: Row) throws
}

extension Int64: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(self, at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Int64 { try row.int64(index) }
}

extension Int: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(Int64(self), at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Int { Int(try row.int64(index)) }
}

extension Int32: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(Int64(self), at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Int32 {
        let value = try row.int64(index)
        guard let narrow = Int32(exactly: value) else {
            throw SQLiteError.columnType(row.name(index), expected: "a 32-bit integer, found \(value)", sql: nil)
        }
        return narrow
    }
}

extension Bool: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(Int64(self ? 1 : 0), at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Bool { try row.int64(index) != 0 }
}

extension Double: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(self, at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Double { try row.double(index) }
}

extension String: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(self, at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> String { try row.string(index) }
}

extension Data: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws { try statement.bind(self, at: index) }
    public static func decode(from row: Row, at index: Int32) throws -> Data { try row.data(index) }
}

/// UUIDs are stored as their 16 raw bytes: half the size of the text form, and compared bytewise.
extension UUID: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws {
        try statement.bind(withUnsafeBytes(of: uuid) { Data($0) }, at: index)
    }
    public static func decode(from row: Row, at index: Int32) throws -> UUID {
        // Read in place: a track page decodes one per row, and a Data copy each cost more than the rest.
        if let uuid = row.uuid(index) { return uuid }
        let data = try row.data(index)
        throw SQLiteError.columnType(row.name(index), expected: "a 16-byte UUID, found \(data.count) bytes", sql: nil)
    }
}

extension UUID {
    /// Builds a UUID from exactly 16 raw bytes.
    public init?(bytes data: Data) {
        guard data.count == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { _ = data.copyBytes(to: $0) }
        self.init(uuid: raw)
    }

    /// The 16 raw bytes.
    public var rawBytes: Data { withUnsafeBytes(of: uuid) { Data($0) } }
}

/// Dates are stored as REAL seconds since 1970 (Unix time), the form `sqlite3`, Python and
/// `datetime(x, 'unixepoch')` all read without conversion.
extension Date: SQLiteBindable, SQLiteColumnDecodable {
    public func bind(to statement: Statement, at index: Int32) throws {
        try statement.bind(timeIntervalSince1970, at: index)
    }
    public static func decode(from row: Row, at index: Int32) throws -> Date {
        Date(timeIntervalSince1970: try row.double(index))
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    public func bind(to statement: Statement, at index: Int32) throws {
        if let value = self { try value.bind(to: statement, at: index) } else { try statement.bindNull(at: index) }
    }
}

extension Optional: SQLiteColumnDecodable where Wrapped: SQLiteColumnDecodable {
    public static func decode(from row: Row, at index: Int32) throws -> Wrapped? {
        row.isNull(index) ? nil : try Wrapped.decode(from: row, at: index)
    }
}

/// Any single SQLite value, as stored: lets code compare and copy rows without knowing their types.
public enum DatabaseValue: Equatable, Sendable, SQLiteBindable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    public func bind(to statement: Statement, at index: Int32) throws {
        switch self {
        case .null: try statement.bindNull(at: index)
        case .integer(let value): try statement.bind(value, at: index)
        case .real(let value): try statement.bind(value, at: index)
        case .text(let value): try statement.bind(value, at: index)
        case .blob(let value): try statement.bind(value, at: index)
        }
    }
}
