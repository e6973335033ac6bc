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
/// The table only grows during sync: a value no track has any more stays until the next build,
/// and matches no row (its key finds none with that text). Values shorter than three characters
/// have no trigram and are not indexed; queries that short scan instead (see `MirrorFilter`).
enum MirrorValues {
    /// The fields indexed, each a column of `mirror_value` named like its `f_` column.
    static let fields: [TextField] = [.title, .artist, .album, .albumArtist, .composer, .genre]

    static func column(_ field: TextField) -> String { MirrorSchema.snake(field.rawValue) }

    /// `case_sensitive 1`: the values are folded already, and folding them again would find rows
    /// the direct path does not.
    static var createSQL: String {
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS mirror_value USING fts5(
          \(fields.map { column($0) }.joined(separator: ", ")), key UNINDEXED, tokenize='trigram case_sensitive 1'
        );
        """
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
        for field in fields {
            if cancelled() { throw CancellationError() }
            let name = column(field)
            try db.execute(
                """
                INSERT INTO mirror_value (\(name), key)
                SELECT f_\(name), k_\(name) FROM mirror_track
                WHERE f_\(name) IS NOT NULL AND length(f_\(name)) >= 3 GROUP BY k_\(name), f_\(name)
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

    /// The values of the rows `ids` in `fields` (indexes into `MirrorValues.fields`).
    static func values(of ids: [(TrackID, [Int])], in db: Connection) throws -> Set<Value> {
        var found = Set<Value>()
        let statement = try db.cachedStatement(rowSQL)
        for (id, wanted) in ids where !wanted.isEmpty {
            try statement.bind([id.rawValue])
            defer { statement.reset() }
            guard try statement.step() else { continue }
            let row = statement.currentRow
            for field in wanted {
                guard let folded = row.optionalString(Int32(2 * field + 1)), indexable(folded),
                      let key = row.optionalData(Int32(2 * field)) else { continue }
                found.insert(Value(field: field, key: key, folded: folded))
            }
        }
        return found
    }

    /// Adds the values the index does not hold yet.
    static func add(_ values: Set<Value>, to db: Connection) throws {
        guard !values.isEmpty else { return }
        let exists = fields.map { field in
            "SELECT 1 FROM mirror_value WHERE mirror_value MATCH ? AND \(column(field)) = ? AND key = ? LIMIT 1"
        }
        for value in values {
            let field = fields[value.field]
            let present = try db.scalar(Int.self, exists[value.field], [match(field, value.folded), value.folded, value.key]) != nil
            if present { continue }
            try db.execute("INSERT INTO mirror_value (\(column(field)), key) VALUES (?, ?)", [value.folded, value.key])
        }
    }

    /// The indexes (into `fields`) of the indexed fields that differ between two versions of a track.
    static func changedFields(from old: Track, to new: Track) -> [Int] {
        fields.indices.filter { fields[$0].value(of: old) != fields[$0].value(of: new) }
    }
}
