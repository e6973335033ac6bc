import CSQLite
import Foundation

/// The current row of a stepping statement. Valid only inside the closure that received it:
/// copy what you need into values there (this is how nothing of SQLite leaves its executor).
public struct Row {
    let statement: Statement

    init(statement: Statement) { self.statement = statement }

    private var handle: OpaquePointer { statement.handle }

    /// The number of columns.
    public var count: Int { Int(sqlite3_column_count(handle)) }

    /// The name of a column, for error messages.
    public func name(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }

    /// True when the column holds NULL.
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    private func typeError(_ index: Int32, _ expected: String) -> SQLiteError {
        SQLiteError.columnType(name(index), expected: expected, sql: statement.sql)
    }

    /// An integer column; NULL is an error.
    public func int64(_ index: Int32) throws -> Int64 {
        guard !isNull(index) else { throw typeError(index, "an integer, found NULL") }
        return sqlite3_column_int64(handle, index)
    }
    /// An integer column or nil.
    public func optionalInt64(_ index: Int32) -> Int64? { isNull(index) ? nil : sqlite3_column_int64(handle, index) }
    /// An integer column declared NOT NULL, read without a type check (NULL would read as 0):
    /// on the hottest paths the check costs as much as the read.
    public func nonNullInt64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    /// A floating-point column declared NOT NULL, read the same way.
    public func nonNullDouble(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// Reads a column in its storage type without building a Swift value and returns a number
    /// taken from it (so the read cannot be skipped): what the cheapest possible client pays to
    /// get a value out, for benchmarks to compare against.
    public func touch(_ index: Int32) -> Int {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: Int(truncatingIfNeeded: sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: Int(sqlite3_column_double(handle, index).sign == .minus ? 1 : 0)
        case SQLITE_TEXT:
            Int(bitPattern: sqlite3_column_text(handle, index)) &+ Int(sqlite3_column_bytes(handle, index))
        case SQLITE_BLOB:
            Int(bitPattern: sqlite3_column_blob(handle, index)) &+ Int(sqlite3_column_bytes(handle, index))
        default: 0
        }
    }

    /// A floating-point column; NULL is an error.
    public func double(_ index: Int32) throws -> Double {
        guard !isNull(index) else { throw typeError(index, "a number, found NULL") }
        return sqlite3_column_double(handle, index)
    }
    /// A floating-point column or nil.
    public func optionalDouble(_ index: Int32) -> Double? { isNull(index) ? nil : sqlite3_column_double(handle, index) }
    /// A text column; NULL is an error.
    public func string(_ index: Int32) throws -> String {
        guard let text = optionalString(index) else { throw typeError(index, "text, found NULL") }
        return text
    }
    /// A text column or nil; text may hold any bytes, invalid UTF-8 is repaired rather than trapped.
    public func optionalString(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
    /// A blob column; NULL is an error.
    public func data(_ index: Int32) throws -> Data {
        guard let data = optionalData(index) else { throw typeError(index, "a blob, found NULL") }
        return data
    }
    /// The first byte of a blob or text column; nil for NULL or an empty value. Reads in place,
    /// without copying the value out.
    public func firstByte(_ index: Int32) -> UInt8? {
        // SQLite answers NULL for an empty blob as for a NULL one, so the pointer alone tells.
        sqlite3_column_blob(handle, index)?.load(as: UInt8.self)
    }

    /// A 16-byte blob column as a UUID, read in place; nil for NULL or any other length.
    public func uuid(_ index: Int32) -> UUID? {
        // The pointer first, then the length, as SQLite asks.
        guard let pointer = sqlite3_column_blob(handle, index), sqlite3_column_bytes(handle, index) == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: 16)) }
        return UUID(uuid: raw)
    }

    /// A blob column as bytes; NULL is an error.
    public func bytes(_ index: Int32) throws -> [UInt8] {
        if isNull(index) { throw typeError(index, "a blob, found NULL") }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A blob column or nil.
    public func optionalData(_ index: Int32) -> Data? {
        if isNull(index) { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
    /// A column's value with the storage type SQLite holds it in.
    public func value(_ index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT: .text(optionalString(index) ?? "")
        case SQLITE_BLOB: .blob(optionalData(index) ?? Data())
        default: .null
        }
    }

    /// Decodes a column as any `SQLiteColumnDecodable` type (optional types accept NULL).
    public func get<T: SQLiteColumnDecodable>(_ index: Int32, as type: T.Type = T.self) throws -> T {
        try T.decode(from: self, at: index)
    }
}
