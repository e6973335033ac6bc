import Foundation
import ShelfCore
import ShelfDatabase

/// How a `Track` becomes a `mirror_track` row: its list columns, every sort key, folded filter text.
enum MirrorRow {
    static let textKeyColumns = MirrorSchema.textKeyFields.flatMap {
        ["k_\(MirrorSchema.snake($0.rawValue))", "t_\(MirrorSchema.snake($0.rawValue))"]
    }
    static let numberColumns = MirrorSchema.numberFields.map { "n_\(MirrorSchema.snake($0.rawValue))" }
    /// The stored columns (virtual ones are derived by SQLite), in the order `values` gives them.
    static let columns: [String] =
        ["id", "title", "artist", "album", "album_artist", "composer", "genre"] + MirrorSchema.sortTagColumns
        + ["has_artwork", "compilation"] + textKeyColumns
        + ["k_genre", "k_path"] + numberColumns
        + MirrorSchema.displayTextFields.map { "z_\(MirrorSchema.snake($0.rawValue))" }
        + MirrorSchema.storedFoldFields.map { "f_\(MirrorSchema.snake($0.rawValue))" }
        + MirrorSchema.songColumns

    static let columnIndex = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })

    /// The search document of a row's stored values (`columns` order).
    static func searchDocument(_ values: [DatabaseValue]) -> SearchDocument {
        SearchDocument { name in
            if case .text(let text)? = columnIndex[name].map({ values[$0] }) { return text }
            return nil
        }
    }

    static let upsert =
        "INSERT OR REPLACE INTO mirror_track (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"

    /// The parts of a track the mirror's columns are computed from, so that an edit recomputes
    /// (and compares) only the columns of the parts that changed.
    struct Sources: OptionSet {
        let rawValue: Int
        static let title = Sources(rawValue: 1 << 0)
        static let artist = Sources(rawValue: 1 << 1)
        static let album = Sources(rawValue: 1 << 2)
        static let albumArtist = Sources(rawValue: 1 << 3)
        static let composer = Sources(rawValue: 1 << 4)
        static let genre = Sources(rawValue: 1 << 5)
        static let flags = Sources(rawValue: 1 << 6)
        static let path = Sources(rawValue: 1 << 7)
        static let numbers = Sources(rawValue: 1 << 8)
        static let codec = Sources(rawValue: 1 << 9)
        /// What only a protocol's song shows (channels, comment, the picture's ID, the details).
        static let song = Sources(rawValue: 1 << 10)
        /// The details (lists, roles, labels): songs show them and search reads their credits.
        static let details = Sources(rawValue: 1 << 11)
        static let all = Sources(rawValue: (1 << 12) - 1)
        /// The parts the search index is computed from.
        static let searched: Sources = [.title, .artist, .album, .albumArtist, .composer, .genre, .details]

        /// The parts that differ between two versions of a track (a sort tag counts as its field).
        init(changedFrom old: Track, to new: Track) {
            var sources: Sources = []
            if old.title != new.title || old.sortTitle != new.sortTitle { sources.insert(.title) }
            if old.artist != new.artist || old.sortArtist != new.sortArtist || old.details.displayArtistID != new.details.displayArtistID {
                sources.insert(.artist)
            }
            if old.album != new.album || old.sortAlbum != new.sortAlbum || old.details.musicBrainz.releaseID != new.details.musicBrainz.releaseID {
                sources.insert(.album)
            }
            if old.albumArtist != new.albumArtist || old.sortAlbumArtist != new.sortAlbumArtist
                || old.details.displayAlbumArtistID != new.details.displayAlbumArtistID
            {
                sources.insert(.albumArtist)
            }
            if old.composer != new.composer || old.sortComposer != new.sortComposer { sources.insert(.composer) }
            if old.genre != new.genre { sources.insert(.genre) }
            if old.hasArtwork != new.hasArtwork || old.compilation != new.compilation { sources.insert(.flags) }
            if old.path != new.path { sources.insert(.path) }
            if old.codec != new.codec { sources.insert([.codec, .song]) }
            if old.channels != new.channels || old.comment != new.comment || old.artworkID != new.artworkID { sources.insert(.song) }
            if old.details != new.details { sources.insert([.song, .details]) }
            if MirrorSchema.numberFields.contains(where: { $0.value(of: old) != $0.value(of: new) }) { sources.insert(.numbers) }
            self = sources
        }

        init(rawValue: Int) { self.rawValue = rawValue }
    }

    /// Every stored column's value for a track, in `columns` order.
    static func values(_ t: Track, options: SortKeyOptions) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(columns.count)
        emit(t, options: options, sources: .all) { _, value in values.append(value) }
        return values
    }

    /// The values of the columns computed from `sources`, by column index.
    static func values(_ t: Track, options: SortKeyOptions, sources: Sources) -> [Int: DatabaseValue] {
        var values: [Int: DatabaseValue] = [:]
        emit(t, options: options, sources: sources) { index, value in values[index] = value }
        return values
    }

    /// Computes the columns of `sources` in `columns` order and hands each to `body` with its index.
    private static func emit(_ t: Track, options: SortKeyOptions, sources: Sources, _ body: (Int, DatabaseValue) -> Void) {
        var index = 0
        func put(_ value: DatabaseValue, if part: Sources) {
            if sources.contains(part) { body(index, value) }
            index += 1
        }
        put(.integer(t.id.rawValue), if: [])
        for (text, part) in [
            (t.title, Sources.title), (t.artist, .artist), (t.album, .album), (t.albumArtist, .albumArtist),
            (t.composer, .composer), (t.genre, .genre),
        ] {
            put(text.map { .text($0) } ?? .null, if: part)
        }
        for (tag, part) in [
            (t.sortTitle, Sources.title), (t.sortArtist, .artist), (t.sortAlbum, .album),
            (t.sortAlbumArtist, .albumArtist), (t.sortComposer, .composer),
        ] {
            put(SortKey.isBlank(tag) ? .null : .text(tag!), if: part)
        }
        put(.integer(t.hasArtwork ? 1 : 0), if: .flags)
        put(.integer(t.compilation ? 1 : 0), if: .flags)
        for (display, tag, part) in [
            (t.title, t.sortTitle, Sources.title), (t.artist, t.sortArtist, .artist), (t.album, t.sortAlbum, .album),
            (t.albumArtist, t.sortAlbumArtist, .albumArtist), (t.composer, t.sortComposer, .composer),
        ] {
            guard sources.contains(part) else {
                index += 2
                continue
            }
            // An album's keys carry its release ID and an artist's its MusicBrainz ID, as
            // `GroupMember` and the direct path's do.
            func key(_ text: String?) -> [UInt8] {
                let key = SortKey.textKey(text, options: options)
                switch part {
                case .album: return SortKey.withRelease(key, t.details.musicBrainz.releaseID)
                case .artist: return SortKey.withArtistID(key, t.details.displayArtistID)
                case .albumArtist: return SortKey.withArtistID(key, t.details.displayAlbumArtistID)
                default: return key
                }
            }
            let displayKey = key(display)
            put(.blob(Data(displayKey)), if: part)
            // Most tracks carry no sort tag, or one that keys like the display value: NULL then.
            let tagKey = SortKey.isBlank(tag) ? displayKey : key(tag)
            put(tagKey == displayKey ? .null : .blob(Data(tagKey)), if: part)
        }
        if sources.contains(.genre) { put(.blob(Data(SortKey.textKey(t.genre, options: options))), if: .genre) } else { index += 1 }
        put(.blob(Data(t.path.utf8)), if: .path)
        for field in MirrorSchema.numberFields {
            // Whole numbers as INTEGER (smaller on disk); SQLite compares INTEGER and REAL numerically.
            if let value = field.value(of: t) {
                put(value == value.rounded() && abs(value) < 9e15 ? .integer(Int64(value)) : .real(value), if: .numbers)
            } else {
                put(.real(SortKey.missingNumber), if: .numbers)
            }
        }
        for (field, part) in zip(MirrorSchema.displayTextFields, [Sources.title, .artist, .album, .albumArtist, .composer, .genre]) {
            guard sources.contains(part) else {
                index += 1
                continue
            }
            guard let value = field.value(of: t) else {
                put(.null, if: part)
                continue
            }
            let folded = SortKey.isBlank(value) ? "" : Filter.fold(value)
            // Bytes, not String equality: Swift calls a decomposed fold (Hangul as jamo) equal to
            // the composed original, but SQLite compares bytes with the folded filter value.
            put(folded.utf8.elementsEqual(asciiLowercased(value).utf8) ? .null : .text(folded), if: part)
        }
        for field in MirrorSchema.storedFoldFields {
            let part: Sources = .codec
            guard sources.contains(part) else {
                index += 1
                continue
            }
            let value = field.value(of: t)
            put(SortKey.isBlank(value) ? .null : .text(Filter.fold(value!)), if: part)
        }
        put(t.codec.map { .text($0) } ?? .null, if: .song)
        put(t.channels.map { .integer(Int64($0)) } ?? .null, if: .song)
        put(t.comment.map { .text($0) } ?? .null, if: .song)
        put(t.artworkID.map { .blob($0.rawValue.rawBytes) } ?? .null, if: .song)
        put(t.details.encoded.map { .text($0) } ?? .null, if: .song)
        assert(index == columns.count, "every stored column is emitted once")
    }

    /// What SQLite's built-in `lower()` gives: ASCII letters lowercased, every other byte kept.
    static func asciiLowercased(_ text: String) -> String {
        var bytes = Array(text.utf8)
        for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A { bytes[index] += 0x20 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first key byte of every sectioned column (`MirrorSchema.sectionColumns`) of a row's
    /// stored values; a virtual s_ column is its t_ value, else its k_ value.
    static func sectionBytes(_ values: [DatabaseValue]) -> [UInt8] {
        sectionBytes { values[$0] }.map { $0 ?? 0xFF }
    }

    /// The same from some of a row's values: nil for the sectioned columns not among them.
    static func sectionBytes(_ value: (Int) -> DatabaseValue?) -> [UInt8?] {
        sectionSources.map { sources in
            guard value(sources[0]) != nil else { return nil }
            for index in sources { if case .blob(let data)? = value(index) { return data.first ?? 0xFF } }
            return 0xFF
        }
    }

    private static let sectionSources: [[Int]] = MirrorSchema.sectionColumns.map { column in
        let candidates = column.hasPrefix("s_") ? ["t_" + column.dropFirst(2), "k_" + column.dropFirst(2)] : [column]
        return candidates.compactMap { columns.firstIndex(of: $0) }
    }

    static let selectAll = "SELECT \(columns.joined(separator: ", ")) FROM mirror_track WHERE id = ?"

    /// The UPDATE that sets only `changed` columns: SQLite then maintains only the indexes that
    /// hold them, so a play-count edit touches one index instead of every sort's.
    static func update(_ changed: [Int]) -> String {
        "UPDATE mirror_track SET \(changed.map { "\(columns[$0]) = ?" }.joined(separator: ", ")) WHERE id = ?"
    }
}

/// A protocol's song (`TrackFields.song`) from one `mirror_track` row: a page of songs is then
/// read from the mirror alone, whose rows are smaller and closer together than the store's.
enum MirrorSong {
    static let select = """
        SELECT id, k_path, n_file_size, title, artist, album, album_artist, genre, n_year, n_track_number, n_disc_number,
        n_duration, n_bitrate, n_sample_rate, channels, codec, compilation, comment, sort_title, sort_album, artwork_id,
        n_date_added, n_date_modified, n_play_count, n_skip_count, n_last_played, n_rating, details
        FROM mirror_track WHERE id = ?
        """

    static func decode(_ row: Row) throws -> Track {
        func number(_ index: Int32) -> Double? {
            guard let value = row.optionalDouble(index), value < SortKey.missingNumber else { return nil }
            return value
        }
        func integer(_ index: Int32) -> Int? { number(index).map { Int($0) } }
        func date(_ index: Int32) -> Date? { number(index).map { Date(timeIntervalSince1970: $0) } }
        return Track(
            id: TrackID(try row.int64(0)), path: String(decoding: try row.data(1), as: UTF8.self), fileSize: Int64(integer(2) ?? 0),
            title: row.optionalString(3), artist: row.optionalString(4), album: row.optionalString(5), albumArtist: row.optionalString(6),
            genre: row.optionalString(7), year: integer(8), trackNumber: integer(9), discNumber: integer(10), duration: number(11),
            bitrate: integer(12), sampleRate: integer(13), channels: row.optionalInt64(14).map { Int($0) }, codec: row.optionalString(15),
            compilation: try row.int64(16) != 0, comment: row.optionalString(17), sortTitle: row.optionalString(18),
            sortAlbum: row.optionalString(19), artworkID: row.isNull(20) ? nil : ArtworkID(try row.get(20, as: UUID.self)),
            dateAdded: date(21) ?? Date(timeIntervalSince1970: 0), dateModified: date(22) ?? Date(timeIntervalSince1970: 0),
            playCount: integer(23) ?? 0, skipCount: integer(24) ?? 0, lastPlayed: date(25), rating: integer(26) ?? 0,
            details: TrackDetails(encoded: row.optionalString(27)))
    }

    /// A whole track cut to what the mirror's song holds (the store path of `TrackFields.song`,
    /// so both paths give equal values): dates to the whole second, no counts of tracks and discs
    /// or file time, blank sort tags none.
    static func cut(_ track: Track) -> Track {
        var song = track
        if SortKey.isBlank(song.sortTitle) { song.sortTitle = nil }
        if SortKey.isBlank(song.sortAlbum) { song.sortAlbum = nil }
        song.fileModified = nil
        song.trackCount = nil
        song.discCount = nil
        song.dateAdded = Date(timeIntervalSince1970: NumberField.seconds(track.dateAdded))
        song.dateModified = Date(timeIntervalSince1970: NumberField.seconds(track.dateModified))
        song.lastPlayed = track.lastPlayed.map { Date(timeIntervalSince1970: NumberField.seconds($0)) }
        return song
    }
}
