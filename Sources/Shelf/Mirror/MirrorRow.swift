import Foundation
import ShelfCore
import ShelfDatabase

/// How a `Track` becomes a `mirror_track` row: its list columns, every sort key, folded filter text.
enum MirrorRow {
    static let textKeyColumns = MirrorSchema.textKeyFields.flatMap {
        ["k_\(MirrorSchema.snake($0.rawValue))", "s_\(MirrorSchema.snake($0.rawValue))"]
    }
    static let numberColumns = MirrorSchema.numberFields.map { "n_\(MirrorSchema.snake($0.rawValue))" }
    static let foldedFields = TextField.allCases.filter { $0 != .path }
    static let columns: [String] =
        ["id", "title", "artist", "album", "album_artist", "genre", "has_artwork", "compilation"] + textKeyColumns
        + ["k_genre", "k_path"] + numberColumns + foldedFields.map { "f_\(MirrorSchema.snake($0.rawValue))" }

    static let upsert =
        "INSERT OR REPLACE INTO mirror_track (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"

    /// Every column's value for a track, in `columns` order.
    static func values(_ t: Track, options: SortKeyOptions) -> [DatabaseValue] {
        var values: [DatabaseValue] = [.integer(t.id.rawValue)]
        values.reserveCapacity(columns.count)
        for text in [t.title, t.artist, t.album, t.albumArtist, t.genre] { values.append(text.map { .text($0) } ?? .null) }
        values.append(.integer(t.hasArtwork ? 1 : 0))
        values.append(.integer(t.compilation ? 1 : 0))
        for (display, tag) in [(t.title, t.sortTitle), (t.artist, t.sortArtist), (t.album, t.sortAlbum),
                               (t.albumArtist, t.sortAlbumArtist), (t.composer, t.sortComposer)] {
            // The sort-tag key equals the display key unless the tag is non-blank: computed once.
            let displayKey = Data(SortKey.textKey(display, options: options))
            values.append(.blob(displayKey))
            values.append(.blob(SortKey.isBlank(tag) ? displayKey : Data(SortKey.textKey(tag, options: options))))
        }
        values.append(.blob(Data(SortKey.textKey(t.genre, options: options))))
        values.append(.blob(Data(t.path.utf8)))
        for field in MirrorSchema.numberFields {
            // Whole numbers as INTEGER (smaller on disk); SQLite compares INTEGER and REAL numerically.
            if let value = field.value(of: t) {
                values.append(value == value.rounded() && abs(value) < 9e15 ? .integer(Int64(value)) : .real(value))
            } else {
                values.append(.real(SortKey.missingNumber))
            }
        }
        for field in foldedFields {
            let value = field.value(of: t)
            values.append(SortKey.isBlank(value) ? .null : .text(Filter.fold(value!)))
        }
        return values
    }

    static let selectAll = "SELECT \(columns.joined(separator: ", ")) FROM mirror_track WHERE id = ?"

    /// The UPDATE that sets only `changed` columns: SQLite then maintains only the indexes that
    /// hold them, so a play-count edit touches one index instead of every sort's.
    static func update(_ changed: [Int]) -> String {
        "UPDATE mirror_track SET \(changed.map { "\(columns[$0]) = ?" }.joined(separator: ", ")) WHERE id = ?"
    }
}
