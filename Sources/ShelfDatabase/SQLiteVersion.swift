import CSQLite

/// The SQLite library this process loaded, as opposed to the header it was compiled against.
public enum SQLiteLibrary {
    /// `sqlite3_libversion()`, e.g. "3.40.1": what `shelf version` reports.
    public static var version: String { String(cString: sqlite3_libversion()) }
}
