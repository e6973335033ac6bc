import Foundation
import ShelfCore
import ShelfDatabase

/// How a `Track` maps to a `track` row: one column list, one decoder, one binder, so reads and
/// writes cannot drift apart.
enum TrackRow {
    /// Every column, in the order `decode` and `bindAll` use.
    static let columns = [
        "id", "path", "file_size", "file_modified", "title", "artist", "album", "album_artist", "composer", "genre",
        "year", "track_number", "track_count", "disc_number", "disc_count", "duration", "bitrate", "sample_rate",
        "channels", "codec", "compilation", "comment", "lyrics", "sort_title", "sort_artist", "sort_album",
        "sort_album_artist", "sort_composer", "artwork_id", "date_added", "date_modified", "play_count", "skip_count",
        "last_played", "rating", "audio_hash", "details", "missing_since",
    ]

    static let columnList = columns.joined(separator: ", ")
    static let select = "SELECT \(columnList) FROM track"
    /// `select` without the long texts no list, sort, filter or mirror row uses (lyrics and
    /// comment come back nil): what scans of the whole table read.
    static let selectWithoutTexts =
        "SELECT \(columns.map { $0 == "lyrics" || $0 == "comment" ? "NULL" : $0 }.joined(separator: ", ")) FROM track"
    /// `select` without lyrics: what the mirror copies (its rows hold a song's comment).
    static let selectForMirror = "SELECT \(columns.map { $0 == "lyrics" ? "NULL" : $0 }.joined(separator: ", ")) FROM track"
    /// `select` with only what a protocol's song shows (lyrics, composer, the artist sort tags and
    /// the audio hash come back nil): a page of 500 songs decodes a String per column it reads.
    static let selectForSongs =
        "SELECT \(columns.map { ["lyrics", "composer", "sort_artist", "sort_album_artist", "sort_composer", "audio_hash"].contains($0) ? "NULL" : $0 }.joined(separator: ", ")) FROM track"
    /// Only tracks whose files are on disk: what browsing lists (appended to a select).
    static let present = " WHERE missing_since IS NULL"
    /// One track by ID: composed once, not per lookup.
    static let selectByID = select + " WHERE id = ?"
    static let insert =
        "INSERT INTO track (\(columnList)) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    static let update =
        "UPDATE track SET \(columns.dropFirst().map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    /// Decodes a row selected with `select`.
    static func decode(_ row: Row) throws -> Track {
        Track(
            id: TrackID(try row.int64(0)), path: try row.string(1), fileSize: try row.int64(2),
            fileModified: try row.get(3), title: row.optionalString(4), artist: row.optionalString(5),
            album: row.optionalString(6), albumArtist: row.optionalString(7), composer: row.optionalString(8),
            genre: row.optionalString(9), year: try row.get(10), trackNumber: try row.get(11),
            trackCount: try row.get(12), discNumber: try row.get(13), discCount: try row.get(14),
            duration: row.optionalDouble(15), bitrate: try row.get(16), sampleRate: try row.get(17),
            channels: try row.get(18), codec: row.optionalString(19), compilation: try row.get(20),
            comment: row.optionalString(21), lyrics: row.optionalString(22), sortTitle: row.optionalString(23),
            sortArtist: row.optionalString(24), sortAlbum: row.optionalString(25),
            sortAlbumArtist: row.optionalString(26), sortComposer: row.optionalString(27),
            artworkID: try row.get(28, as: UUID?.self).map { ArtworkID($0) }, dateAdded: try row.get(29),
            dateModified: try row.get(30), playCount: try row.get(31), skipCount: try row.get(32),
            lastPlayed: try row.get(33), rating: try row.get(34), audioHash: row.optionalString(35),
            details: TrackDetails(encoded: row.optionalString(36)), missingSince: try row.get(37))
    }

    /// Binds every column but `id` starting at parameter `first`; returns the next free index.
    /// One typed call per column: this runs for every imported track, so no boxing.
    @discardableResult
    static func bindFields(_ t: Track, to s: Statement, from first: Int32) throws -> Int32 {
        var i = first
        func next() -> Int32 {
            defer { i += 1 }
            return i
        }
        try s.bind(t.path, at: next())
        try s.bind(t.fileSize, at: next())
        try s.bind(optional: t.fileModified, at: next())
        try s.bind(optional: t.title, at: next())
        try s.bind(optional: t.artist, at: next())
        try s.bind(optional: t.album, at: next())
        try s.bind(optional: t.albumArtist, at: next())
        try s.bind(optional: t.composer, at: next())
        try s.bind(optional: t.genre, at: next())
        try s.bind(optional: t.year, at: next())
        try s.bind(optional: t.trackNumber, at: next())
        try s.bind(optional: t.trackCount, at: next())
        try s.bind(optional: t.discNumber, at: next())
        try s.bind(optional: t.discCount, at: next())
        try s.bind(optional: t.duration, at: next())
        try s.bind(optional: t.bitrate, at: next())
        try s.bind(optional: t.sampleRate, at: next())
        try s.bind(optional: t.channels, at: next())
        try s.bind(optional: t.codec, at: next())
        try s.bind(optional: t.compilation, at: next())
        try s.bind(optional: t.comment, at: next())
        try s.bind(optional: t.lyrics, at: next())
        try s.bind(optional: t.sortTitle, at: next())
        try s.bind(optional: t.sortArtist, at: next())
        try s.bind(optional: t.sortAlbum, at: next())
        try s.bind(optional: t.sortAlbumArtist, at: next())
        try s.bind(optional: t.sortComposer, at: next())
        try s.bind(optional: t.artworkID?.rawValue, at: next())
        try s.bind(optional: t.dateAdded, at: next())
        try s.bind(optional: t.dateModified, at: next())
        try s.bind(optional: t.playCount, at: next())
        try s.bind(optional: t.skipCount, at: next())
        try s.bind(optional: t.lastPlayed, at: next())
        try s.bind(optional: t.rating, at: next())
        try s.bind(optional: t.audioHash, at: next())
        try s.bind(optional: t.details.encoded, at: next())
        try s.bind(optional: t.missingSince, at: next())
        return i
    }

    /// Checks the values the schema constrains, so a bad value is reported by name, not as a
    /// constraint failure.
    static func validate(_ track: Track) throws {
        if track.path.isEmpty { throw LibraryError.invalidValue(field: "path", value: "\"\"", reason: "must not be empty") }
        if !(0...100).contains(track.rating) {
            throw LibraryError.invalidValue(field: "rating", value: String(track.rating), reason: "must be 0–100")
        }
        for (name, value) in [("playCount", track.playCount), ("skipCount", track.skipCount)] where value < 0 {
            throw LibraryError.invalidValue(field: name, value: String(value), reason: "must not be negative")
        }
        if track.fileSize < 0 {
            throw LibraryError.invalidValue(field: "fileSize", value: String(track.fileSize), reason: "must not be negative")
        }
        if let duration = track.duration, !(duration.isFinite && duration >= 0) {
            throw LibraryError.invalidValue(field: "duration", value: String(duration), reason: "must be a finite number ≥ 0")
        }
    }
}
