import CSQLite
import Foundation

/// A SQLite result code (primary or extended), matchable in `catch` clauses: `catch SQLiteError.busy`.
public struct ResultCode: Hashable, Sendable, CustomStringConvertible {
    /// The raw `SQLITE_*` value.
    public let rawValue: Int32

    /// Wraps a raw `SQLITE_*` value.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte) of an extended code.
    public var primary: ResultCode { ResultCode(rawValue & 0xFF) }

    public var description: String {
        String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))"
    }

    public static let error = ResultCode(SQLITE_ERROR)
    public static let busy = ResultCode(SQLITE_BUSY)
    public static let locked = ResultCode(SQLITE_LOCKED)
    public static let readonly = ResultCode(SQLITE_READONLY)
    public static let cantOpen = ResultCode(SQLITE_CANTOPEN)
    public static let corrupt = ResultCode(SQLITE_CORRUPT)
    public static let notADatabase = ResultCode(SQLITE_NOTADB)
    public static let constraint = ResultCode(SQLITE_CONSTRAINT)
    public static let misuse = ResultCode(SQLITE_MISUSE)
    public static let range = ResultCode(SQLITE_RANGE)
    public static let mismatch = ResultCode(SQLITE_MISMATCH)
    public static let ioError = ResultCode(SQLITE_IOERR)
    public static let full = ResultCode(SQLITE_FULL)
    public static let permission = ResultCode(SQLITE_PERM)
    public static let interrupt = ResultCode(SQLITE_INTERRUPT)

    /// Lets `catch ResultCode.busy` match any `SQLiteError` whose primary code is `.busy`.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.code == pattern || error.extendedCode == pattern
    }
}

/// Every failure of the SQLite layer: the result codes, SQLite's message, and the SQL that failed.
///
/// One struct rather than an enum so codes can grow without breaking callers; match with
/// `catch SQLiteError.busy` or compare `error.code`.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code.
    public let code: ResultCode
    /// The extended result code (equal to `code` when SQLite gave none).
    public let extendedCode: ResultCode
    /// SQLite's own message, or ours for errors raised by this layer.
    public let message: String
    /// The SQL being prepared or run, when there was one.
    public let sql: String?
    /// The database file, when known.
    public let path: String?
    /// The `errno` of the system call behind an I/O error (ENOSPC for a full disk), else 0:
    /// SQLite reports some full-disk failures as plain I/O errors.
    public let systemErrno: Int32

    /// Builds an error from its parts; `code` is derived from `extendedCode`.
    public init(extendedCode: Int32, message: String, sql: String? = nil, path: String? = nil, systemErrno: Int32 = 0) {
        self.extendedCode = ResultCode(extendedCode)
        self.code = ResultCode(extendedCode & 0xFF)
        self.message = message
        self.sql = sql
        self.path = path
        self.systemErrno = systemErrno
    }

    public var description: String {
        var text = "SQLite error \(code.rawValue)"
        if extendedCode != code { text += "/\(extendedCode.rawValue)" }
        text += ": \(message)"
        if let path { text += " [\(path)]" }
        if let sql { text += " — in \(sql.trimmingCharacters(in: .whitespacesAndNewlines).prefix(300))" }
        return text
    }

    public static let busy = ResultCode.busy
    public static let constraint = ResultCode.constraint
    public static let notADatabase = ResultCode.notADatabase

    /// A value read from a column was NULL or of a type the caller cannot accept.
    static func columnType(_ column: String, expected: String, sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: SQLITE_MISMATCH, message: "column \(column): expected \(expected)", sql: sql)
    }

    /// The caller used the layer wrongly (a closed connection, a bad argument count).
    static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISUSE, message: message, sql: sql)
    }
}
