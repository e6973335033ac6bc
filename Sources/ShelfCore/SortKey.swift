import Foundation

/// One comparable component of a track's position in a sorted list.
///
/// Missing values — nil, empty, or only whitespace — are `.missing`, which sorts after every
/// present value in ascending order (and so first when descending): one defined place.
public enum SortComponent: Comparable, Sendable, Hashable {
    case text(String)
    case number(Double)
    case missing
}

/// Turns field values into comparable components. Text is folded (case, diacritics, width) so that
/// "beyonce", "Beyoncé" and "ＢＥＹＯＮＣＥ" sort together.
public enum SortKey {
    /// True when a value is nil, empty, or only Unicode whitespace (including U+3000 and NBSP).
    public static func isBlank(_ value: String?) -> Bool {
        guard let value else { return true }
        return value.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    }

    /// The folded comparison form of a display value, or `.missing` when it is blank.
    public static func text(_ value: String?) -> SortComponent {
        guard let value, !isBlank(value) else { return .missing }
        return .text(
            value.trimmingCharacters(in: .whitespacesAndNewlines)
                .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil))
    }

    /// The component for a text field, taking the sort tag instead of the display value when sort
    /// tags are on and the tag is not blank.
    public static func text(_ value: String?, sortTag: String?, useSortTags: Bool) -> SortComponent {
        if useSortTags, !isBlank(sortTag) { return text(sortTag) }
        return text(value)
    }

    /// The component of one field of a track.
    public static func component(_ field: SortField, of track: Track, useSortTags: Bool) -> SortComponent {
        func number<T: BinaryInteger>(_ value: T?) -> SortComponent { value.map { .number(Double($0)) } ?? .missing }
        func date(_ value: Date?) -> SortComponent { value.map { .number($0.timeIntervalSince1970) } ?? .missing }
        switch field {
        case .title: return text(track.title, sortTag: track.sortTitle, useSortTags: useSortTags)
        case .artist: return text(track.artist, sortTag: track.sortArtist, useSortTags: useSortTags)
        case .album: return text(track.album, sortTag: track.sortAlbum, useSortTags: useSortTags)
        case .albumArtist:
            return text(track.albumArtist, sortTag: track.sortAlbumArtist, useSortTags: useSortTags)
        case .composer: return text(track.composer, sortTag: track.sortComposer, useSortTags: useSortTags)
        case .genre: return text(track.genre)
        case .path: return .text(track.path)
        case .year: return number(track.year)
        case .trackNumber: return number(track.trackNumber)
        case .discNumber: return number(track.discNumber)
        case .duration: return track.duration.map { .number($0) } ?? .missing
        case .bitrate: return number(track.bitrate)
        case .sampleRate: return number(track.sampleRate)
        case .fileSize: return number(track.fileSize)
        case .dateAdded: return date(track.dateAdded)
        case .dateModified: return date(track.dateModified)
        case .lastPlayed: return date(track.lastPlayed)
        case .playCount: return number(track.playCount)
        case .rating: return number(track.rating)
        }
    }

    /// The whole key of a track under `query`: its tie-break chain's components (the ID comes last
    /// and is compared separately).
    public static func components(of track: Track, for query: LibraryQuery) -> [SortComponent] {
        query.sort.tieBreakChain.map { component($0, of: track, useSortTags: query.useSortTags) }
    }

    /// True when `a` comes before `b` under the ascending order of the chain, the ID breaking ties.
    public static func precedes(_ a: (key: [SortComponent], id: TrackID), _ b: (key: [SortComponent], id: TrackID)) -> Bool {
        for (x, y) in zip(a.key, b.key) where x != y { return x < y }
        return a.id < b.id
    }
}
