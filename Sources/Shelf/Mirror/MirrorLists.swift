import Foundation
import ShelfCore
import ShelfDatabase

/// The values of the list fields and the details' numbers, beside the mirror's rows: one row per
/// track, field and value in `mirror_list`, so that `artist:`, `label:`, `mbid:`, `bpm:` and the
/// like find their tracks through an index instead of decoding every row's details.
///
/// A list value that folds like the field's display value is left out (the display column
/// answers for it): a track credited to one artist, the common case, has no rows here.
enum MirrorLists {
    /// The text fields with lists, each with its stable code in `mirror_list.field`.
    static let textFields: [(field: TextField, code: Int)] = [
        (.artist, 1), (.albumArtist, 2), (.composer, 3), (.genre, 4), (.label, 5), (.releaseType, 6), (.mood, 7), (.mbid, 8),
        (.isrc, 9), (.catalogNumber, 10),
    ]
    /// The detail numbers, likewise.
    static let numberFields: [(field: NumberField, code: Int)] = [(.bpm, 20), (.originalYear, 21)]
    /// A track with a ReplayGain gain has one row of this code.
    static let replayGainCode = 30
    /// The credited roles, each with its code: a row per person (the name as tagged, keyed like
    /// an artist) behind `shelf artists --role`.
    static let roles: [(role: String, code: Int)] = [
        ("lyricist", 41), ("conductor", 42), ("remixer", 43), ("producer", 44), ("engineer", 45), ("mixer", 46), ("djmixer", 47),
        ("arranger", 48), ("performer", 49),
    ]

    static func code(role: String) -> Int? { roles.first { $0.role == role.lowercased() }?.code }

    static func code(_ field: TextField) -> Int? { textFields.first { $0.field == field }?.code }
    static func code(_ field: NumberField) -> Int? { numberFields.first { $0.field == field }?.code }

    /// The fields whose values are also groups of the views (a track counts under each credited
    /// artist, composer and genre): their rows carry the value's group key.
    static let groupedFields: Set<TextField> = [.artist, .composer, .genre]

    /// The primary key reads a track's rows for sync; the value index finds a value's tracks, the
    /// key index a group's credited members.
    static let createSQL = """
        CREATE TABLE IF NOT EXISTS mirror_list (
          track INTEGER NOT NULL, field INTEGER NOT NULL, value NOT NULL, key BLOB, PRIMARY KEY (track, field, value)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS mirror_list_value ON mirror_list (field, value);
        CREATE INDEX IF NOT EXISTS mirror_list_key ON mirror_list (field, key) WHERE key IS NOT NULL;
        """

    /// One row's field and value (folded text, or a number), and a grouped value's key.
    struct Row: Hashable {
        let field: Int
        let text: String?
        let number: Double?
        var key: [UInt8]? = nil

        var value: DatabaseValue { text.map(DatabaseValue.text) ?? .real(number ?? 0) }
    }

    /// The rows of `track`, without repeats (one per folded value: the first listed keys it).
    static func rows(_ track: Track, options: SortKeyOptions = SortKeyOptions()) -> Set<Row> {
        var rows = Set<Row>()
        for (field, code) in textFields {
            let list = field.list(of: track)
            guard !list.isEmpty else { continue }
            let display = field.value(of: track).flatMap { SortKey.isBlank($0) ? nil : Filter.fold($0) }
            // Artists' keys carry their MusicBrainz IDs, as `GroupMember.credits` keys them; the
            // display value's row is left out only when the track's own key says the same.
            let keys: [[UInt8]]? =
                !groupedFields.contains(field)
                ? nil
                : field == .artist
                    ? SortKey.creditKeys(list, ids: track.details.musicBrainz.artistIDs, options: options)
                    : list.map { SortKey.textKey($0, options: options) }
            let displayKey = field == .artist ? SortKey.artistKey(of: track, options: options) : nil
            var seen = Set<String>()
            for (index, value) in list.enumerated() where !SortKey.isBlank(value) {
                let folded = Filter.fold(value)
                let key = keys?[index]
                if folded == display && (displayKey == nil || key == displayKey) { continue }
                guard seen.insert(folded).inserted else { continue }
                rows.insert(Row(field: code, text: folded, number: nil, key: key))
            }
        }
        for (field, code) in numberFields {
            if let value = field.value(of: track) { rows.insert(Row(field: code, text: nil, number: value)) }
        }
        if FlagField.replayGain.value(of: track) { rows.insert(Row(field: replayGainCode, text: nil, number: 1)) }
        for contributor in track.details.contributors where !SortKey.isBlank(contributor.name) {
            guard let code = code(role: contributor.role) else { continue }
            rows.insert(Row(field: code, text: contributor.name, number: nil, key: SortKey.contributorKey(contributor.name, of: track, options: options)))
        }
        return rows
    }

    /// Adds `track`'s rows (a new row in the mirror).
    static func insert(_ track: Track, into db: Connection) throws {
        let rows = rows(track)
        guard !rows.isEmpty else { return }
        let statement = try db.cachedStatement("INSERT OR IGNORE INTO mirror_list (track, field, value, key) VALUES (?, ?, ?, ?)")
        for row in rows {
            try statement.bind([track.id.rawValue, Int64(row.field), row.value, row.key.map { Data($0) }])
            try statement.run()
        }
    }

    /// Brings a track's rows from `before` to `after` (nil: no such track); nothing when they agree.
    static func replace(_ id: TrackID, before: Track?, after: Track?, in db: Connection) throws {
        let old = before.map { rows($0) } ?? []
        let new = after.map { rows($0) } ?? []
        guard old != new else { return }
        try db.execute("DELETE FROM mirror_list WHERE track = ?", [id.rawValue])
        if let after { try insert(after, into: db) }
    }

    /// Replaces a track's rows whatever they were (its old version is not known in memory).
    static func reset(_ id: TrackID, to track: Track?, in db: Connection) throws {
        try db.execute("DELETE FROM mirror_list WHERE track = ?", [id.rawValue])
        if let track { try insert(track, into: db) }
    }

    /// The tracks with a row of `code` meeting `condition` on `value`, as an `IN` set: the value
    /// index finds them (equality, a range) or scans the field's part of it (contains, prefix).
    static func trackSet(_ code: Int, _ condition: String) -> String {
        "mirror_track.id IN (SELECT track FROM mirror_list WHERE field = \(code) AND \(condition))"
    }

    /// Whether the row's track credits the group key bound to it in `field`'s list.
    static func credited(_ field: TextField) -> String {
        "mirror_track.id IN (SELECT track FROM mirror_list WHERE field = \(code(field)!) AND key = ?)"
    }

    /// Whether the row's track has any row of `code`: probed per row through the primary key,
    /// for tests that hold for most tracks (`replayGain:yes`), where a set would be large.
    static func exists(_ code: Int) -> String {
        "EXISTS (SELECT 1 FROM mirror_list WHERE track = mirror_track.id AND field = \(code))"
    }
}

/// The people credited in one role, as a view's rows: one per name (by its artist key, so its
/// ID is the artist view's), named as on its lowest-ID track, with its tracks and albums counted;
/// in key order. The mirror feeds it `mirror_list` rows, the direct path every track.
struct RoleCredits {
    private var byKey: [[UInt8]: (name: String, tracks: Set<Int64>, albums: Set<[UInt8]>, first: Int64)] = [:]

    /// Notes that track `id` of album key `album` credits `name` (keyed `key`) in the role.
    mutating func add(key: [UInt8], name: String, track id: Int64, album: [UInt8]) {
        var entry = byKey[key] ?? (name, [], [], id)
        if id < entry.first { (entry.name, entry.first) = (name, id) }
        entry.tracks.insert(id)
        entry.albums.insert(album)
        byKey[key] = entry
    }

    /// The rows in key order.
    func items() -> [GroupItem] {
        byKey.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { key, entry in
            GroupItem(
                id: GroupKey(kind: .artist, key: key).id, kind: .artist, name: entry.name, trackCount: entry.tracks.count,
                albumCount: entry.albums.count, duration: 0, section: SortKey.section(ofKey: key))
        }
    }
}
