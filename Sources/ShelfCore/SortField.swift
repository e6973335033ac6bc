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
    /// so every order is total and keyset paging is exact. Chains stay short because the mirror
    /// keeps one index per chain: text sorts fall through to where the track sits on its album,
    /// `year` groups albums within a year, and the other numbers and dates go straight to the ID.
    ///
    /// - title: title, artist, ID
    /// - artist: artist, album, disc, track, title, ID
    /// - album: album, album artist, disc, track, ID
    /// - albumArtist: album artist, album, disc, track, ID
    /// - composer: composer, album, disc, track, ID
    /// - genre: genre, album artist, album, disc, track, ID
    /// - year: year, album artist, album, disc, track, ID
    /// - discNumber: disc, track, ID
    /// - every other field: the field, ID
    public var tieBreakChain: [SortField] {
        switch self {
        case .title: [.title, .artist]
        case .artist: [.artist, .album, .discNumber, .trackNumber, .title]
        case .album: [.album, .albumArtist, .discNumber, .trackNumber]
        case .albumArtist: [.albumArtist, .album, .discNumber, .trackNumber]
        case .composer: [.composer, .album, .discNumber, .trackNumber]
        case .genre: [.genre, .albumArtist, .album, .discNumber, .trackNumber]
        case .year: [.year, .albumArtist, .album, .discNumber, .trackNumber]
        case .discNumber: [.discNumber, .trackNumber]
        default: [self]
        }
    }

    /// True when the order depends on the sort-tags setting: some field of the chain has a sort tag.
    public var dependsOnSortTags: Bool { tieBreakChain.contains(where: \.hasSortTag) }
}

/// A track list: the sort field, the direction, whether sort tags replace display values, and a
/// filter. Descending reverses the whole chain, track ID included.
public struct LibraryQuery: Sendable, Codable, Equatable, Hashable {
    public var sort: SortField
    public var descending: Bool
    public var useSortTags: Bool
    public var filter: Filter

    /// Describes a list sorted by `sort`.
    public init(sort: SortField = .artist, descending: Bool = false, useSortTags: Bool = true, filter: Filter = .all) {
        self.sort = sort
        self.descending = descending
        self.useSortTags = useSortTags
        self.filter = filter
    }
}
