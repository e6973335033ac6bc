import Foundation

/// Text fields a filter can test. Matching is folded like sort keys (case, diacritics, width,
/// kana), without skipping articles — except `path`, matched byte for byte as file systems do.
/// `artist`, `albumArtist`, `composer` and `genre` test the display value and every value of the
/// field's list (`TrackDetails`); the list-only fields (`label` … `catalogNumber`) test their list.
public enum TextField: String, Sendable, Codable, CaseIterable {
    case title, artist, album, albumArtist, composer, genre, codec, path
    case label, releaseType, mood, mbid, isrc, catalogNumber

    /// The fields a bare word searches.
    public static let searchable: [TextField] = [.title, .artist, .album, .albumArtist, .composer, .genre]

    /// Fields with no single value on a track, only a list.
    public var isListOnly: Bool {
        switch self {
        case .label, .releaseType, .mood, .mbid, .isrc, .catalogNumber: true
        default: false
        }
    }

    /// The field's single value on a track (the display credit of a list field; nil for list-only fields).
    public func value(of track: Track) -> String? {
        switch self {
        case .title: track.title
        case .artist: track.artist
        case .album: track.album
        case .albumArtist: track.albumArtist
        case .composer: track.composer
        case .genre: track.genre
        case .codec: track.codec
        case .path: track.path
        case .label, .releaseType, .mood, .mbid, .isrc, .catalogNumber: nil
        }
    }

    /// The field's list on a track, in tag order (`mbid`: every MusicBrainz ID and the AcoustID);
    /// empty for single-value fields.
    public func list(of track: Track) -> [String] {
        let details = track.details
        switch self {
        case .artist: return details.artists
        case .albumArtist: return details.albumArtists
        case .composer: return details.composers
        case .genre: return details.genres
        case .label: return details.labels
        case .releaseType: return details.releaseTypes
        case .mood: return details.moods
        case .mbid: return details.musicBrainz.all
        case .isrc: return details.isrcs
        case .catalogNumber: return details.catalogNumbers
        case .title, .album, .codec, .path: return []
        }
    }

    /// Every value a filter on the field tests: the single value, then the list's.
    public func values(of track: Track) -> [String] {
        (value(of: track).map { [$0] } ?? []) + list(of: track)
    }
}

/// Numeric and date fields a filter can test. Dates are whole seconds since 1970 (rounded down):
/// filters and sorts compare them at that precision, and the track ID orders tracks within a second.
public enum NumberField: String, Sendable, Codable, CaseIterable {
    case year, trackNumber, discNumber, duration, bitrate, sampleRate, fileSize, playCount, skipCount, rating
    case dateAdded, dateModified, lastPlayed
    /// From the details: beats per minute, and the year of the original date.
    case bpm, originalYear

    /// Fields read from the track's details (the mirror keeps them beside its rows, not in them).
    public var isDetail: Bool { self == .bpm || self == .originalYear }

    /// A date as the whole seconds it compares by: a 4-byte integer in the mirror's rows and
    /// indexes instead of an 8-byte float, and nobody sorts by fractions of a second.
    public static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }

    /// The field's value on a track, nil when missing.
    public func value(of track: Track) -> Double? {
        switch self {
        case .year: track.year.map(Double.init)
        case .trackNumber: track.trackNumber.map(Double.init)
        case .discNumber: track.discNumber.map(Double.init)
        case .duration: track.duration
        case .bitrate: track.bitrate.map(Double.init)
        case .sampleRate: track.sampleRate.map(Double.init)
        case .fileSize: Double(track.fileSize)
        case .playCount: Double(track.playCount)
        case .skipCount: Double(track.skipCount)
        case .rating: Double(track.rating)
        case .dateAdded: Self.seconds(track.dateAdded)
        case .dateModified: Self.seconds(track.dateModified)
        case .lastPlayed: track.lastPlayed.map(Self.seconds)
        case .bpm: track.details.bpm.map(Double.init)
        case .originalYear: track.details.originalDate.flatMap { Int($0.prefix(4)) }.map(Double.init)
        }
    }
}

/// Yes/no properties a filter can test.
public enum FlagField: String, Sendable, Codable, CaseIterable {
    case compilation, hasArtwork
    /// The track carries a ReplayGain (or Opus R128) gain.
    case replayGain
    /// The track's file is gone (`Track.missing`); lists show missing tracks only to a filter
    /// that names this field.
    case missing

    /// The property on a track.
    public func value(of track: Track) -> Bool {
        switch self {
        case .compilation: track.compilation
        case .hasArtwork: track.hasArtwork
        case .replayGain: track.details.replayGain.map { $0.trackGain != nil || $0.albumGain != nil } ?? false
        case .missing: track.missing
        }
    }
}

/// How a text field is compared with a value (both folded).
public enum TextMatch: Sendable, Hashable, Codable {
    case equals(String)
    case contains(String)
    case prefix(String)
}

/// Which tracks a list shows: comparisons on fields combined with AND, OR and NOT. Always
/// evaluated with bound parameters on the mirror, never by pasting user text into SQL.
public indirect enum Filter: Sendable, Hashable, Codable {
    /// Every track.
    case all
    case text(TextField, TextMatch)
    /// A value within `lower...upper` (either end open when nil); a missing value never matches.
    case range(NumberField, lower: Double?, upper: Double?)
    case flag(FlagField, Bool)
    /// The field is blank (text) or absent (numbers).
    case missingText(TextField)
    case missingNumber(NumberField)
    /// Any text field contains the words (a bare word on the command line).
    case anyText(String)
    case and([Filter])
    case or([Filter])
    case not(Filter)

    /// Evaluates the filter on a track in Swift (the direct path's oracle).
    public func matches(_ track: Track) -> Bool {
        switch self {
        case .all: return true
        case .text(let field, let match):
            let raw = field == .path
            func fold(_ text: String) -> String { raw ? text : Filter.fold(text) }
            // Any value of the field matches, the display value or one of its list.
            return field.values(of: track).contains { value in
                guard !SortKey.isBlank(value) else { return false }
                let folded = fold(value)
                switch match {
                // Byte comparisons of UTF-8, exactly as SQLite's `=`, `instr` and `substr` on the mirror.
                case .equals(let text): return folded.utf8.elementsEqual(fold(text).utf8)
                case .contains(let text): return Filter.contains(folded, fold(text))
                case .prefix(let text): return folded.utf8.starts(with: fold(text).utf8)
                }
            }
        case .range(let field, let lower, let upper):
            guard let value = field.value(of: track) else { return false }
            return (lower.map { value >= $0 } ?? true) && (upper.map { value <= $0 } ?? true)
        case .flag(let field, let expected): return field.value(of: track) == expected
        case .missingText(let field): return field.values(of: track).allSatisfy { SortKey.isBlank($0) }
        case .missingNumber(let field): return field.value(of: track) == nil
        case .anyText(let text):
            // As the mirror compiles it: a contains-filter on each searchable field, lists included.
            return TextField.searchable.contains { Filter.text($0, .contains(text)).matches(track) }
        case .and(let filters): return filters.allSatisfy { $0.matches(track) }
        case .or(let filters): return filters.contains { $0.matches(track) }
        case .not(let filter): return !filter.matches(track)
        }
    }

    /// Whether the filter tests `missing` anywhere: only such a list includes missing tracks (and
    /// is answered from the store, since the mirror holds none).
    public var mentionsMissing: Bool {
        switch self {
        case .flag(.missing, _): true
        case .and(let filters), .or(let filters): filters.contains(where: \.mentionsMissing)
        case .not(let filter): filter.mentionsMissing
        default: false
        }
    }

    /// The folded form matching uses: the sort-key folding as a string, whitespace runs as one space.
    public static func fold(_ text: String) -> String {
        if let cached = KeyCache<String>.folds.get(text) { return cached }
        let folded = computeFold(text)
        KeyCache<String>.folds.set(text, folded)
        return folded
    }

    private static func computeFold(_ text: String) -> String {
        if let bytes = SortKey.asciiFolded(text) { return String(decoding: bytes, as: UTF8.self) }
        return String(String.UnicodeScalarView(SortKey.foldedScalars(text)))
    }

    /// Substring test on UTF-8 bytes, the same as SQLite's `instr` on the folded columns.
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        let h = Array(haystack.utf8)
        let n = Array(needle.utf8)
        if n.isEmpty { return true }
        if n.count > h.count { return false }
        for start in 0...(h.count - n.count) where h[start] == n[0] && h[start..<(start + n.count)].elementsEqual(n) {
            return true
        }
        return false
    }
}
