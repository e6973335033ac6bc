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

    /// The first byte of each sectioned key column, for `mirror_section` counts.
    static let sectionSelect =
        "SELECT \(MirrorSchema.sectionColumns.map { "substr(\($0), 1, 1)" }.joined(separator: ", ")) FROM mirror_track WHERE id = ?"

    /// The first byte of each sectioned key of a track, in `MirrorSchema.sectionColumns` order.
    static func sectionBytes(_ track: Track, options: SortKeyOptions) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in MirrorSchema.textKeyFields {
            bytes.append(key(field, track, tags: false, options: options).first ?? 0xFF)
            bytes.append(key(field, track, tags: true, options: options).first ?? 0xFF)
        }
        bytes.append(SortKey.textKey(track.genre, options: options).first ?? 0xFF)
        return bytes
    }

    static func key(_ field: SortField, _ track: Track, tags: Bool, options: SortKeyOptions) -> [UInt8] {
        guard case .bytes(let bytes) = SortKey.component(field, of: track, useSortTags: tags, options: options) else { return [] }
        return bytes
    }

    /// Binds a track's whole row to `upsert`.
    static func bind(_ t: Track, to s: Statement, options: SortKeyOptions) throws {
        var i: Int32 = 1
        func next() -> Int32 {
            defer { i += 1 }
            return i
        }
        try s.bind(t.id.rawValue, at: next())
        try s.bind(optional: t.title, at: next())
        try s.bind(optional: t.artist, at: next())
        try s.bind(optional: t.album, at: next())
        try s.bind(optional: t.albumArtist, at: next())
        try s.bind(optional: t.genre, at: next())
        try s.bind(Int64(t.hasArtwork ? 1 : 0), at: next())
        try s.bind(Int64(t.compilation ? 1 : 0), at: next())
        for field in MirrorSchema.textKeyFields {
            let display = key(field, t, tags: false, options: options)
            let tagged = key(field, t, tags: true, options: options)
            try s.bind(Data(display), at: next())
            try s.bind(Data(tagged), at: next())
        }
        try s.bind(Data(SortKey.textKey(t.genre, options: options)), at: next())
        try s.bind(Data(t.path.utf8), at: next())
        for field in MirrorSchema.numberFields {
            let value = field.value(of: t)
            // Whole numbers as INTEGER (smaller on disk); SQLite compares INTEGER and REAL numerically.
            if let value, value == value.rounded(), abs(value) < 9e15 {
                try s.bind(Int64(value), at: next())
            } else {
                try s.bind(value ?? SortKey.missingNumber, at: next())
            }
        }
        for field in foldedFields {
            let value = field.value(of: t)
            try s.bind(optional: SortKey.isBlank(value) ? nil : Filter.fold(value!), at: next())
        }
    }
}
