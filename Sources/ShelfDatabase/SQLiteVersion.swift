import CSQLite

/// The SQLite library this process loaded, as opposed to the header it was compiled against.
public enum SQLiteLibrary {
    /// `sqlite3_libversion()`, e.g. "3.40.1": what `shelf version` reports.
    public static var version: String { String(cString: sqlite3_libversion()) }
}

extension SQLiteLibrary {
    /// Caps what SQLite keeps in this process, all connections together: past `bytes`, a page
    /// cache reuses its least recently used page instead of growing. Zero removes the cap.
    public static func limitMemory(toBytes bytes: Int64) { sqlite3_soft_heap_limit64(max(0, bytes)) }

    /// The cap `limitMemory` set, zero for none.
    public static var memoryLimit: Int64 { sqlite3_soft_heap_limit64(-1) }

    /// What SQLite holds now in this process, page caches, statements and schemas of every connection.
    public static var memoryInUse: Int64 { sqlite3_memory_used() }
}
