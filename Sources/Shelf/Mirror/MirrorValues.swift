import Foundation
import ShelfCore
import ShelfDatabase

/// The substring index behind contains-filters (`artist:beat`): every distinct folded value of the
/// keyed text fields, once, in an FTS5 trigram table, with the field's sort key beside it.
///
/// A filter finds the values holding the text through the trigrams, then the tracks through the
/// field's sort index (`k_artist IN (…)`), and checks each of those rows' folded text with
/// `instr`, the test the scan made, so the answer is exact. Values repeat across a library (every
/// track of an album), so indexing each once costs a fraction of indexing every row.
///
/// Sync adds new values to `mirror_value_recent`, a plain table that queries scan beside the
/// trigram index (FTS5 inserts cost a 100-title edit ~7 ms at its commit); once it holds
/// `recentLimit` values they move into the trigram index in one step.
///
/// The index only grows during sync: a value no track has any more stays until the next build,
/// and matches no row (its key finds none with that text); a value a track takes again after
/// no other track held it is added again (a harmless duplicate). Values shorter than three characters
/// have no trigram and are not in the trigram index.
///
/// Every distinct value, short ones too, is also a row of `mirror_value_text` by field: a one- or
/// two-character contains-filter (`album:ab`), which no trigram serves, scans that field's distinct
/// values (a few tens of thousands at 500,000 tracks) instead of every track's row.
enum MirrorValues {
    /// The fields indexed, each a column of `mirror_value` named like its `f_` column.
    static let fields: [TextField] = [.title, .artist, .album, .albumArtist, .composer, .genre]

    static func column(_ field: TextField) -> String { MirrorSchema.snake(field.rawValue) }

    /// Each field's display column in `MirrorRow.columns` (the text its fold comes from).
    static let displayColumns = fields.map { MirrorRow.columnIndex[column($0)]! }

    /// `case_sensitive 1`: the values are folded already, and folding them again would find rows
    /// the direct path does not.
    static var createSQL: String {
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS mirror_value USING fts5(
          \(fields.map { column($0) }.joined(separator: ", ")), key UNINDEXED, tokenize='trigram case_sensitive 1'
        );
        CREATE TABLE IF NOT EXISTS mirror_value_recent (field INTEGER NOT NULL, key BLOB NOT NULL, folded TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS mirror_value_text (
          field INTEGER NOT NULL, folded TEXT NOT NULL, key BLOB NOT NULL, PRIMARY KEY (field, folded, key)
        ) WITHOUT ROWID;
        """
    }

    /// The subquery of the keys whose distinct values of `field` hold the text (its one
    /// argument), by a scan of the field's rows of `mirror_value_text`.
    static func shortKeysSQL(_ field: TextField) -> String {
        "SELECT key FROM mirror_value_text WHERE field = \(fields.firstIndex(of: field)!) AND instr(folded, ?) > 0"
    }

    /// Recent values beyond which they move into the trigram index (scanning them costs a
    /// query about a tenth of a millisecond per thousand).
    static let recentLimit = 4_000

    /// The subquery of the keys whose values of `field` hold the text: its two arguments are
    /// `match(field, text)` and the text.
    static func keysSQL(_ field: TextField) -> String {
        "SELECT key FROM mirror_value WHERE mirror_value MATCH ? UNION ALL "
            + "SELECT key FROM mirror_value_recent WHERE field = \(fields.firstIndex(of: field)!) AND instr(folded, ?) > 0"
    }

    /// Whether `text` (folded) is long enough for the trigram index.
    static func indexable(_ text: String) -> Bool { text.unicodeScalars.count >= 3 }

    /// An FTS5 query for `text` as a substring of `field`: one phrase of its trigrams.
    static func match(_ field: TextField, _ text: String) -> String {
        "\(column(field)) : \"\(text.replacingOccurrences(of: "\"", with: "\"\""))\""
    }

    /// Fills the index from the built rows, one statement per field (the sort indexes give each
    /// field's distinct key and fold in order).
    static func build(in db: Connection, cancelled: () -> Bool) throws {
        try db.execute("DELETE FROM mirror_value")
        try db.execute("DELETE FROM mirror_value_recent")
        try db.execute("DELETE FROM mirror_value_text")
        for (index, field) in fields.enumerated() {
            if cancelled() { throw CancellationError() }
            let name = column(field)
            try db.execute(
                """
                INSERT INTO mirror_value_text (field, folded, key)
                SELECT \(index), f_\(name), k_\(name) FROM mirror_track
                WHERE f_\(name) IS NOT NULL GROUP BY k_\(name), f_\(name)
                """)
            try db.execute(
                """
                INSERT INTO mirror_value (\(name), key)
                SELECT folded, key FROM mirror_value_text WHERE field = \(index) AND length(folded) >= 3
                """)
        }
    }

    /// The SQL selecting the key and fold of every indexed field of one mirror row.
    static let rowSQL = "SELECT " + fields.map { "k_\(column($0)), f_\(column($0))" }.joined(separator: ", ") + " FROM mirror_track WHERE id = ?"

    /// One field's value of a row, as the index holds it.
    struct Value: Hashable {
        let field: Int
        let key: Data
        let folded: String
    }

    /// The values of the rows `ids` in `fields` (indexes into `MirrorValues.fields`), each with
    /// how many of those rows hold it.
    static func values(of ids: [(TrackID, [Int])], in db: Connection) throws -> [Value: Int] {
        var found: [Value: Int] = [:]
        let statement = try db.cachedStatement(rowSQL)
        for (id, wanted) in ids where !wanted.isEmpty {
            try statement.bind([id.rawValue])
            defer { statement.reset() }
            guard try statement.step() else { continue }
            let row = statement.currentRow
            for field in wanted {
                guard let folded = row.optionalString(Int32(2 * field + 1)), let key = row.optionalData(Int32(2 * field)) else { continue }
                found[Value(field: field, key: key, folded: folded), default: 0] += 1
            }
        }
        return found
    }

    /// Adds the values the index does not hold yet. A value is held when a row other than the
    /// ones that just took it has it too (every row's values are indexed), which the field's
    /// sort index answers by reading at most one row more than took it; an FTS lookup of the
    /// value instead would read the long doclists of its common trigrams.
    static func add(_ values: [Value: Int], to db: Connection) throws {
        var added = 0
        for (value, takers) in values {
            let name = column(fields[value.field])
            let holders =
                try db.scalar(
                    Int.self, "SELECT count(*) FROM (SELECT 1 FROM mirror_track WHERE k_\(name) = ? AND f_\(name) = ? LIMIT ?)",
                    [value.key, value.folded, takers + 1]) ?? 0
            if holders > takers { continue }
            try db.execute("INSERT OR IGNORE INTO mirror_value_text (field, folded, key) VALUES (?, ?, ?)", [value.field, value.folded, value.key])
            guard indexable(value.folded) else { continue }
            try db.execute("INSERT INTO mirror_value_recent (field, key, folded) VALUES (?, ?, ?)", [value.field, value.key, value.folded])
            added += 1
        }
        guard added > 0, try db.scalar(Int.self, "SELECT count(*) > ? FROM mirror_value_recent", [recentLimit]) == 1 else { return }
        for (index, field) in fields.enumerated() {
            try db.execute(
                "INSERT INTO mirror_value (\(column(field)), key) SELECT folded, key FROM mirror_value_recent WHERE field = ?", [index])
        }
        try db.execute("DELETE FROM mirror_value_recent")
    }

    /// The indexes (into `fields`) of the indexed fields that differ between two versions of a track.
    static func changedFields(from old: Track, to new: Track) -> [Int] {
        fields.indices.filter { fields[$0].value(of: old) != fields[$0].value(of: new) }
    }
}
