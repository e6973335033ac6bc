import Foundation
import Testing

@testable import ShelfDatabase

/// A fresh database file in its own temporary directory, removed afterwards.
final class TempDB {
    let directory: URL
    let path: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelfdb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("test.sqlite").path
    }

    func open(busyTimeout: Int32 = 5_000) throws -> Connection {
        let db = try Connection(path: path, busyTimeoutMilliseconds: busyTimeout)
        _ = try db.pragma("journal_mode = WAL")
        return db
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

struct Item: RowDecodable, Equatable {
    var id: Int64
    var name: String?

    init(id: Int64, name: String?) {
        self.id = id
        self.name = name
    }

    init(row: Row) throws {
        id = try row.int64(0)
        name = row.optionalString(1)
    }
}

@Suite struct ConnectionTests {
    @Test func bindsAndReadsEveryType() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, u BLOB, dt REAL, n TEXT, e TEXT, eb BLOB)")
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let blob = Data([0, 1, 2, 255])
        try db.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [Int64.max, 3.5, "héllo 宇多田 \u{0}x", blob, uuid, date, nil as String?, "", Data()])
        let row = try #require(
            try db.queryOne("SELECT * FROM t") { row in
                (
                    try row.get(0, as: Int64.self), try row.get(1, as: Double.self), try row.get(2, as: String.self),
                    try row.get(3, as: Data.self), try row.get(4, as: UUID.self), try row.get(5, as: Date.self),
                    try row.get(6, as: String?.self), try row.get(7, as: String.self), try row.get(8, as: Data?.self)
                )
            })
        #expect(row.0 == Int64.max)
        #expect(row.1 == 3.5)
        #expect(row.2 == "héllo 宇多田 \u{0}x")
        #expect(row.3 == blob)
        #expect(row.4 == uuid)
        #expect(row.5 == date)
        #expect(row.6 == nil)
        #expect(row.7 == "")  // an empty string is text, not NULL
        #expect(row.8 == Data())
        #expect(try db.scalar(String.self, "SELECT typeof(e) FROM t") == "text")
    }

    @Test func nullInNonOptionalColumnIsTypedError() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (NULL)")
        #expect(throws: SQLiteError.self) { try db.scalar(Int64.self, "SELECT x FROM t") }
        do {
            _ = try db.scalar(Int64.self, "SELECT x FROM t")
        } catch let error as SQLiteError {
            #expect(error.code == .mismatch)
            #expect(error.message.contains("x"))
        }
    }

    @Test func decodesRowsIntoValues() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("INSERT INTO item (name) VALUES (?)", ["a"])
        try db.execute("INSERT INTO item (name) VALUES (?)", [nil as String?])
        let items = try db.fetchAll(Item.self, "SELECT id, name FROM item ORDER BY id")
        #expect(items == [Item(id: 1, name: "a"), Item(id: 2, name: nil)])
        #expect(try db.fetchOne(Item.self, "SELECT id, name FROM item WHERE id = ?", [2]) == Item(id: 2, name: nil))
    }

    @Test func cachesStatementsAndEvictsAfterFailedStep() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE u (x INTEGER UNIQUE)")
        let sql = "INSERT INTO u (x) VALUES (?)"
        let first = try db.cachedStatement(sql)
        let again = try db.cachedStatement(sql)
        #expect(first === again)
        try db.execute(sql, [1])
        #expect(throws: SQLiteError.self) { try db.execute(sql, [1]) }
        let after = try db.cachedStatement(sql)
        #expect(after !== first)  // the failed statement was evicted and a fresh one prepared
        try db.execute(sql, [2])
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM u") == 2)
    }

    @Test func errorCarriesCodesMessageAndSQL() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE u (x INTEGER UNIQUE)")
        try db.execute("INSERT INTO u VALUES (?)", [7])
        do {
            try db.execute("INSERT INTO u VALUES (?)", [7])
            Issue.record("expected a constraint error")
        } catch let error as SQLiteError {
            #expect(error.code == .constraint)
            #expect(error.extendedCode.rawValue == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error.message.contains("UNIQUE"))
            #expect(error.sql == "INSERT INTO u VALUES (?)")
            #expect(error.path == temp.path)
            #expect(ResultCode.constraint ~= error)
        }
        #expect(throws: SQLiteError.self) { try db.prepare("SELEC nonsense") }
        #expect(throws: SQLiteError.self) { try db.execute("SELECT ?", [1, 2]) }  // wrong argument count
    }

    @Test func transactionRollsBackOnThrow() throws {
        struct Boom: Error {}
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 0)
        try db.transaction { try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 1)
    }

    /// Work run alongside the COMMIT (on the calling thread) sees the commit's outcome afterwards:
    /// committed rows when it succeeds; a thrown error and rolled-back rows when COMMIT itself
    /// fails (a deferred foreign key is checked only at COMMIT).
    @Test func workAlongsideTheCommitSeesItsOutcome() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(
            script: """
                PRAGMA foreign_keys = ON;
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                """)
        var ran = 0
        try db.transaction(.immediate, whileCommitting: { ran += 1 }) {
            try db.execute("INSERT INTO parent VALUES (1)")
            try db.execute("INSERT INTO child VALUES (1, 1)")
        }
        #expect(ran == 1)
        #expect(try temp.open().scalar(Int.self, "SELECT count(*) FROM child") == 1)

        #expect(throws: SQLiteError.self) {
            try db.transaction(.immediate, whileCommitting: { ran += 1 }) {
                try db.execute("INSERT INTO child VALUES (2, 99)")
            }
        }
        #expect(ran == 2)
        #expect(!db.isInTransaction)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM child") == 1)

        // A body that throws never starts the work.
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.transaction(.immediate, whileCommitting: { ran += 1 }) { throw Boom() }
        }
        #expect(ran == 2)
    }

    @Test func nestedSavepointsRollBackOnlyTheirOwnWork() throws {
        struct Boom: Error {}
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            try? db.savepoint {
                try db.execute("INSERT INTO t VALUES (2)")
                try db.savepoint { try db.execute("INSERT INTO t VALUES (3)") }  // released into 2's savepoint
                throw Boom()
            }
            try db.savepoint {
                try db.execute("INSERT INTO t VALUES (4)")
                try? db.transaction {  // nested transaction() becomes a savepoint
                    try db.execute("INSERT INTO t VALUES (5)")
                    throw Boom()
                }
            }
            #expect(db.isInTransaction)
        }
        #expect(try db.query("SELECT x FROM t ORDER BY x") { try $0.int64(0) } == [1, 4])
    }

    @Test func commitHookCountsCommits() throws {
        let temp = try TempDB()
        let db = try temp.open()
        var commits = 0
        db.setCommitHandler { commits += 1 }
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        try db.transaction {
            for i in 0..<10 { try db.execute("INSERT INTO t VALUES (?)", [i]) }
        }
        #expect(commits == 2)  // the CREATE (autocommit) and the one transaction
        db.setCommitHandler(nil)
        try db.execute("INSERT INTO t VALUES (99)")
        #expect(commits == 2)
    }

    @Test func traceListsStatementsAndTheTablesTheyRead() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(
            script: """
                CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT);
                CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER, blob BLOB);
                """)
        var traced: [String] = []
        db.setTraceHandler { traced.append($0) }
        _ = try db.query("SELECT v FROM a WHERE id > ?", [0]) { $0.optionalString(0) }
        _ = try db.scalar(Int.self, "SELECT count(*) FROM b")
        db.setTraceHandler(nil)
        _ = try db.scalar(Int.self, "SELECT 1")
        #expect(traced == ["SELECT v FROM a WHERE id > ?", "SELECT count(*) FROM b"])
        #expect(try db.tablesRead(by: traced[0]) == ["a"])
        #expect(try db.tablesRead(by: "SELECT a.v FROM a JOIN b ON b.a_id = a.id") == ["a", "b"])
        #expect(try db.tablesRead(by: traced[1]).contains("b"))
    }

    @Test func secondConnectionWaitsForBusyTimeoutThenFails() throws {
        let temp = try TempDB()
        let holder = try temp.open()
        try holder.execute(script: "CREATE TABLE t (x INTEGER)")
        let waiter = try temp.open(busyTimeout: 200)
        try holder.execute(script: "BEGIN IMMEDIATE")
        let start = Date()
        do {
            try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }
            Issue.record("expected SQLITE_BUSY")
        } catch let error as SQLiteError {
            #expect(error.code == .busy)
        }
        // A lower bound only: SQLite's busy handler sleeps the whole timeout before giving up, and a
        // sleep lasts at least what it asked for on any machine, so this cannot fail by being fast.
        #expect(Date().timeIntervalSince(start) >= 0.15)
        try holder.execute(script: "ROLLBACK")
        try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }
        #expect(try waiter.scalar(Int.self, "SELECT count(*) FROM t") == 1)
    }

    @Test func garbageFileIsNotADatabase() throws {
        let temp = try TempDB()
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: temp.path))
        let db = try Connection(path: temp.path)
        do {
            _ = try db.scalar(Int.self, "PRAGMA user_version")
            Issue.record("expected SQLITE_NOTADB")
        } catch let error as SQLiteError {
            #expect(error.code == .notADatabase)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: temp.path)) == garbage)
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let temp = try TempDB()
        let db = try temp.open()
        try db.execute(script: "CREATE TABLE t (x INTEGER)")
        let reader = try Connection(path: temp.path, mode: .readOnly)
        #expect(throws: SQLiteError.self) { try reader.execute("INSERT INTO t VALUES (1)") }
        #expect(try reader.scalar(Int.self, "SELECT count(*) FROM t") == 0)
    }
}
