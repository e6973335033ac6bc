import Foundation

/// The 19 fields a track list can be sorted by. The raw values are the public names the command line
/// accepts (`--sort albumArtist`) and equal the `Track` property names.
public enum SortField: String, Sendable, Codable, CaseIterable {
    case title, artist, album, albumArtist, composer, genre, year, trackNumber, discNumber, duration
    case bitrate, sampleRate, fileSize, path, dateAdded, dateModified, lastPlayed, playCount, rating

    /// True for the five text fields that have a sort tag (TITLESORT, ARTISTSORT, ALBUMSORT,
    /// ALBUMARTISTSORT, COMPOSERSORT), whose order depends on the sort-tags setting.
    public var hasSortTag: Bool {
        switch self {
        case .title, .artist, .album, .albumArtist, .composer: true
        default: false
        }
    }

    /// True for fields compared as text (folded) rather than as numbers or dates.
    public var isText: Bool {
        switch self {
        case .title, .artist, .album, .albumArtist, .composer, .genre, .path: true
        default: false
        }
    }

    /// The fixed order of fields compared when this one ties; the track ID always ends the chain,
    /// so every order is total and keyset paging is exact.
    ///
    /// Text fields fall through to where the track sits on its album (an artist's tracks by album,
    /// then disc, track, title); numbers and dates fall back to the title; `path` is unique already.
    public var tieBreakChain: [SortField] {
        switch self {
        case .title: [.title, .artist, .album, .discNumber, .trackNumber]
        case .artist: [.artist, .album, .discNumber, .trackNumber, .title]
        case .album: [.album, .albumArtist, .discNumber, .trackNumber, .title]
        case .albumArtist: [.albumArtist, .album, .discNumber, .trackNumber, .title]
        case .composer: [.composer, .album, .discNumber, .trackNumber, .title]
        case .genre: [.genre, .artist, .album, .discNumber, .trackNumber, .title]
        case .year: [.year, .albumArtist, .album, .discNumber, .trackNumber, .title]
        case .trackNumber: [.trackNumber, .title]
        case .discNumber: [.discNumber, .trackNumber, .title]
        case .duration: [.duration, .title]
        case .bitrate: [.bitrate, .title]
        case .sampleRate: [.sampleRate, .title]
        case .fileSize: [.fileSize, .title]
        case .path: [.path]
        case .dateAdded: [.dateAdded, .title]
        case .dateModified: [.dateModified, .title]
        case .lastPlayed: [.lastPlayed, .title]
        case .playCount: [.playCount, .title]
        case .rating: [.rating, .title]
        }
    }
}

/// A sort order for a track list: the field, the direction, and whether sort tags replace display
/// values. Descending reverses the whole chain, track ID included.
public struct LibraryQuery: Sendable, Codable, Equatable, Hashable {
    public var sort: SortField
    public var descending: Bool
    public var useSortTags: Bool

    /// Describes a list sorted by `sort`.
    public init(sort: SortField = .artist, descending: Bool = false, useSortTags: Bool = true) {
        self.sort = sort
        self.descending = descending
        self.useSortTags = useSortTags
    }
}
