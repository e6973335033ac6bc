import Foundation
import ShelfCore
import ShelfDatabase

/// The layout of `mirror.sqlite`: one row per track holding what a list row shows, the precomputed
/// keys of every sort (display and sort-tag variants of the five tag-aware fields as real columns,
/// because SQLite cannot range-search an expression index with a row value), folded filter text,
/// and one index per sort chain so that every page, either direction, is an index range scan.
package enum MirrorSchema {
    static let version = 17
    /// The page size of a new mirror file.
    static let pageSize = 4096

    /// The key column of a chain component: `k_` display keys, `s_` sort-tag keys, `n_` numbers.
    static func column(_ field: SortField, tags: Bool) -> String {
        switch field {
        case .title, .artist, .album, .albumArtist, .composer: (tags ? "s_" : "k_") + snake(field.rawValue)
        case .genre: "k_genre"
        case .path: "k_path"
        default: "n_" + snake(field.rawValue)
        }
    }

    /// The key columns of a query's chain, the ID last.
    package static func chain(_ query: LibraryQuery) -> [String] {
        query.sort.tieBreakChain.map { column($0, tags: query.useSortTags && query.sort.dependsOnSortTags) } + ["id"]
    }

    /// The index serving a sort field in one sort-tag setting.
    static func indexName(_ field: SortField, tags: Bool) -> String {
        "mirror_track_" + snake(field.rawValue) + (tags && field.dependsOnSortTags ? "_tags" : "")
    }

    /// The columns whose first byte names a section (the first component of a text sort).
    package static func sectionColumn(_ query: LibraryQuery) -> String? {
        let first = column(query.sort, tags: query.useSortTags && query.sort.dependsOnSortTags)
        return first.hasPrefix("n_") || query.sort == .path ? nil : first
    }

    static let textKeyFields: [SortField] = [.title, .artist, .album, .albumArtist, .composer]
    /// The numbers with a column (the details' numbers are in `mirror_list`).
    static let numberFields: [NumberField] = NumberField.allCases.filter { !$0.isDetail }

    static func snake(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
        return result
    }

    /// Text fields whose display value is a column: their folded filter text is a virtual column
    /// (SQLite's ASCII `lower()` of the display value) unless the fold differs from that.
    static let displayTextFields: [TextField] = [.title, .artist, .album, .albumArtist, .composer, .genre]
    /// Text fields with no display column: their folded filter text is stored.
    static let storedFoldFields: [TextField] = TextField.allCases.filter { $0 != .path && !$0.isListOnly && !displayTextFields.contains($0) }

    static var createSQL: String {
        // Space matters at half a million rows, so what can be derived is a VIRTUAL generated column
        // (no bytes in the row; indexes still hold its values and range-search it like a column):
        // s_ (sort-tag key) is t_ (stored only when the tag's key differs) else the display key k_;
        // f_ (folded filter text) of a display column is z_ (stored only when the fold is not plain
        // ASCII lowercasing; '' for a blank value) else lower(display).
        let textKeys = textKeyFields.flatMap { field -> [String] in
            let name = snake(field.rawValue)
            return ["k_\(name) BLOB NOT NULL", "t_\(name) BLOB", "s_\(name) BLOB GENERATED ALWAYS AS (coalesce(t_\(name), k_\(name))) VIRTUAL"]
        }
        let numbers = numberFields.map { "n_\(snake($0.rawValue)) NOT NULL" }
        let folded =
            displayTextFields.flatMap { field -> [String] in
                let name = snake(field.rawValue)
                return ["z_\(name) TEXT", "f_\(name) TEXT GENERATED ALWAYS AS (nullif(coalesce(z_\(name), lower(\(name))), '')) VIRTUAL"]
            } + storedFoldFields.map { "f_\(snake($0.rawValue)) TEXT" }
        let columns =
            [
                "id INTEGER PRIMARY KEY", "title TEXT", "artist TEXT", "album TEXT", "album_artist TEXT", "composer TEXT", "genre TEXT",
            ] + sortTagColumns.map { "\($0) TEXT" } + [
                "has_artwork INTEGER NOT NULL", "compilation INTEGER NOT NULL",
            ] + textKeys + ["k_genre BLOB NOT NULL", "k_path BLOB NOT NULL"] + numbers + folded
            + ["codec TEXT", "channels INTEGER", "comment TEXT", "artwork_id BLOB", "details TEXT"]
        return """
            CREATE TABLE IF NOT EXISTS mirror_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS mirror_track (
              \(columns.joined(separator: ",\n  "))
            );
            -- Every playlist's items in order (a track may appear more than once), re-copied from the
            -- canonical store whenever the change log names the playlist.
            CREATE TABLE IF NOT EXISTS mirror_playlist_item (
              playlist_id INTEGER NOT NULL,
              position    INTEGER NOT NULL,
              track_id    INTEGER NOT NULL,
              PRIMARY KEY (playlist_id, position)
            ) WITHOUT ROWID;
            -- Rows per section of each sectioned key column, kept current by sync, so that sections and
            -- anchors of the unfiltered list never count rows.
            CREATE TABLE IF NOT EXISTS mirror_section (
              key_column TEXT    NOT NULL,
              section    INTEGER NOT NULL,
              count      INTEGER NOT NULL,
              PRIMARY KEY (key_column, section)
            ) WITHOUT ROWID;
            -- The aggregation views (GroupKind codes), each group recomputed from its members
            -- whenever a write touches one (see MirrorGroups).
            CREATE TABLE IF NOT EXISTS mirror_group (
              kind INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, artist TEXT, artist_id INTEGER,
              k_name BLOB NOT NULL, s_name BLOB NOT NULL, k_artist BLOB, s_artist BLOB, track_count INTEGER NOT NULL,
              album_count INTEGER NOT NULL, duration REAL NOT NULL, year INTEGER, genre TEXT, artwork_track INTEGER,
              first_track INTEGER NOT NULL, sort_name TEXT, artist_sort TEXT, created REAL,
              PRIMARY KEY (kind, id)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS mirror_group_section (
              kind INTEGER NOT NULL, tags INTEGER NOT NULL, section INTEGER NOT NULL, count INTEGER NOT NULL,
              PRIMARY KEY (kind, tags, section)
            ) WITHOUT ROWID;
            -- Large groups an import touched whose recompute waits (see MirrorGroups.refresh), with
            -- how many of their members changed since.
            CREATE TABLE IF NOT EXISTS mirror_group_pending (
              kind INTEGER NOT NULL, id INTEGER NOT NULL, key BLOB NOT NULL, album BLOB, waiting INTEGER NOT NULL,
              PRIMARY KEY (kind, id)
            ) WITHOUT ROWID;
            -- Every album artist each album files under (an album of several album artists is
            -- listed under each; see GroupMember.albumOwners), with the name it is listed by there.
            CREATE TABLE IF NOT EXISTS mirror_album_owner (
              artist_id INTEGER NOT NULL, album_id INTEGER NOT NULL, k_artist BLOB NOT NULL, name TEXT NOT NULL,
              PRIMARY KEY (artist_id, album_id)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS mirror_album_owner_album ON mirror_album_owner (album_id);
            CREATE INDEX IF NOT EXISTS mirror_group_name ON mirror_group (kind, k_name, id);
            CREATE INDEX IF NOT EXISTS mirror_group_name_tags ON mirror_group (kind, s_name, id);
            CREATE INDEX IF NOT EXISTS mirror_group_artist ON mirror_group (kind, artist_id, k_name, id);
            CREATE INDEX IF NOT EXISTS mirror_group_artist_tags ON mirror_group (kind, artist_id, s_name, id);
            -- Albums by their album artist's name, then their own (alphabeticalByArtist).
            CREATE INDEX IF NOT EXISTS mirror_group_owner ON mirror_group (kind, k_artist, k_name, id) WHERE kind = 0;
            CREATE INDEX IF NOT EXISTS mirror_group_owner_sorted ON mirror_group (kind, s_artist, k_artist, s_name, id) WHERE kind = 0;
            DROP INDEX IF EXISTS mirror_group_owner_tags;  -- the first form of the one above, on main for a day
            -- The search index (see SearchDocument for its columns and SearchText for its tokens).
            -- Contentless: the text is not stored twice; a row is removed with its old tokens,
            -- which sync recomputes from the track's old version or its old mirror row.
            CREATE VIRTUAL TABLE IF NOT EXISTS mirror_search USING fts5(
              \(SearchDocument.columns.joined(separator: ", ")), content='', tokenize='ascii', prefix='1'
            );
            \(MirrorValues.createSQL)
            \(MirrorLists.createSQL)
            """
    }

    /// The sort tags as text (NULL when blank): search indexes their tokens, and they survive in
    /// the mirror so that a track's old search row can be recomputed from its mirror row alone.
    static let sortTagColumns = ["sort_title", "sort_artist", "sort_album", "sort_album_artist", "sort_composer"]
    /// What a protocol's song shows beyond a list row, so that a page of songs is built from the
    /// mirror's rows alone (the codec as written: `f_codec` is folded).
    static let songColumns = ["codec", "channels", "comment", "artwork_id", "details"]

    /// Every sort index, created after a bulk build (faster than maintaining them row by row).
    /// No index on folded text: an equality filter on a keyed text field also compares its key,
    /// which a sort index serves (values that fold alike share a key). Each has its name and its
    /// `CREATE INDEX IF NOT EXISTS` (so a resumed build skips the done ones).
    static let sortIndexes: [(name: String, sql: String)] = SortField.allCases.flatMap { field in
        (field.dependsOnSortTags ? [false, true] : [false]).map { tags in
            let name = indexName(field, tags: tags)
            let columns = field.tieBreakChain.map { column($0, tags: tags) }
            return (name, "CREATE INDEX IF NOT EXISTS \(name) ON mirror_track(\(columns.joined(separator: ", ")))")
        }
    }

    /// The names of the sort indexes a file already holds: a build's progress in its index phase.
    static func presentSortIndexes(in db: Connection) throws -> Set<String> {
        let present = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'index'", []) { try $0.string(0) })
        return Set(sortIndexes.map(\.name)).intersection(present)
    }

    /// The key columns whose sections `mirror_section` counts.
    static let sectionColumns: [String] = textKeyFields.flatMap { ["k_\(snake($0.rawValue))", "s_\(snake($0.rawValue))"] } + ["k_genre"]
}
