import CSQLite
import Foundation

/// The Swift closures behind the C hooks, kept alive by the connection that installed them.
struct HookBoxes {
    var trace: Box<(String) -> Void>?
    var commit: Box<() -> Void>?
}

/// A reference wrapper that lets a Swift closure travel through a C `void *` context.
final class Box<T> {
    let value: T
    init(_ value: T) { self.value = value }
}

private let traceCallback: @convention(c) (UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 = {
    event, context, statement, _ in
    guard event == UInt32(SQLITE_TRACE_STMT), let context, let statement else { return 0 }
    let box = Unmanaged<Box<(String) -> Void>>.fromOpaque(context).takeUnretainedValue()
    if let sql = sqlite3_sql(OpaquePointer(statement)) { box.value(String(cString: sql)) }
    return 0
}

private let commitCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
    guard let context else { return 0 }
    Unmanaged<Box<() -> Void>>.fromOpaque(context).takeUnretainedValue().value()
    return 0  // zero lets the commit proceed
}

private let tablesReadCallback:
    @convention(c) (
        UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?
    ) -> Int32 = { context, action, first, _, _, _ in
        guard let context else { return SQLITE_OK }
        if action == SQLITE_READ, let first {
            Unmanaged<Box<(String) -> Void>>.fromOpaque(context).takeUnretainedValue().value(String(cString: first))
        }
        return SQLITE_OK
    }

extension Connection {
    /// Calls `handler` with the SQL text of every statement as it starts to run; nil removes it.
    /// Tests combine it with `tablesRead(by:)` to prove which tables a query touched.
    public func setTraceHandler(_ handler: ((String) -> Void)?) {
        guard let handler else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            hooks.trace = nil
            return
        }
        let box = Box(handler)
        hooks.trace = box
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), traceCallback, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Calls `handler` just before every commit on this connection; nil removes it.
    public func setCommitHandler(_ handler: (() -> Void)?) {
        guard let handler else {
            sqlite3_commit_hook(handle, nil, nil)
            hooks.commit = nil
            return
        }
        let box = Box(handler)
        hooks.commit = box
        sqlite3_commit_hook(handle, commitCallback, Unmanaged.passUnretained(box).toOpaque())
    }

    /// The tables (and virtual tables) that `sql` reads, found by preparing it with SQLite's
    /// authorizer, which reports every column read — exact where parsing SQL text would guess.
    public func tablesRead(by sql: String) throws -> Set<String> {
        var tables = Set<String>()
        let box = Box<(String) -> Void> { tables.insert($0) }
        sqlite3_set_authorizer(handle, tablesReadCallback, Unmanaged.passUnretained(box).toOpaque())
        defer { sqlite3_set_authorizer(handle, nil, nil) }
        try withExtendedLifetime(box) {
            var statement: OpaquePointer?
            let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
            sqlite3_finalize(statement)
            if rc != SQLITE_OK { throw lastError(sql: sql) }
        }
        return tables
    }
}
