import Foundation

/// The aggregation views: tracks grouped into albums, artists, album artists, composers, genres.
public enum GroupKind: String, Sendable, Codable, CaseIterable {
    /// Grouped by album artist ("Various Artists" for compilations) and album.
    case album
    /// Grouped by the track artist.
    case artist
    /// Grouped by album artist (the artist when a track has none; "Various Artists" for compilations).
    case albumArtist
    case composer
    case genre

    /// The storage code of the kind in the mirror.
    public var code: Int64 {
        switch self {
        case .album: 0
        case .artist: 1
        case .albumArtist: 2
        case .composer: 3
        case .genre: 4
        }
    }
}

/// A group's identity: stable across mirror rebuilds and machines, because it is a hash of the
/// group's folded key (see `GroupKey`); an artist has the same ID as artist and as album artist.
public struct GroupID: IntegerIdentifier {
    /// The positive 62-bit hash.
    public let rawValue: Int64
    /// Wraps a stored or printed ID.
    public init(rawValue: Int64) { self.rawValue = rawValue }
}

/// One row of an aggregation view.
public struct GroupItem: Sendable, Codable, Equatable, Identifiable {
    /// Stable across rebuilds (see `GroupID`).
    public var id: GroupID
    /// Which view the row belongs to.
    public var kind: GroupKind
    /// The display name (of the group's lowest-ID track; "Various Artists" for compilations).
    public var name: String
    /// The sort tag the row sorts by with sort tags on, as written (the one most of its tracks
    /// carry); nil when none does and the name sorts it.
    public var sortName: String?
    /// Albums: the album artist shown, and its group ID (an `albumArtist` / `artist` ID).
    public var artist: String?
    public var artistID: GroupID?
    /// Tracks in the group.
    public var trackCount: Int
    /// Distinct albums among the group's tracks (albums: 1).
    public var albumCount: Int
    /// Total seconds of the tracks with a known duration.
    public var duration: Double
    /// Albums: the latest year among its tracks.
    public var year: Int?
    /// Albums: the genre most of its tracks carry (ties: the one that sorts first).
    public var genre: String?
    /// Albums and album artists: a representative picture (the first track with one in disc and
    /// track order; for an album artist, that of its first album with one).
    public var artworkID: ArtworkID?
    /// The track whose picture `artworkID` is.
    public var artworkTrack: TrackID?
    /// The group's lowest-ID track: where an album's release details (labels, release types,
    /// dates, MusicBrainz ID) are read for a list of albums.
    public var firstTrack: TrackID?
    /// Albums: when the first of its tracks was added.
    public var created: Date?
    /// The section the row files under in the view's order.
    public var section: String

    /// A view row; every count and total as given.
    public init(
        id: GroupID, kind: GroupKind, name: String, sortName: String? = nil, artist: String? = nil, artistID: GroupID? = nil, trackCount: Int,
        albumCount: Int, duration: Double, year: Int? = nil, genre: String? = nil, artworkID: ArtworkID? = nil, artworkTrack: TrackID? = nil,
        created: Date? = nil, section: String, firstTrack: TrackID? = nil
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.sortName = sortName
        self.artist = artist
        self.artistID = artistID
        self.trackCount = trackCount
        self.albumCount = albumCount
        self.duration = duration
        self.year = year
        self.genre = genre
        self.artworkID = artworkID
        self.artworkTrack = artworkTrack
        self.firstTrack = firstTrack
        self.created = created
        self.section = section
    }
}

/// Which aggregation view, in which order: by name (its sort name with sort tags on), either
/// direction; optionally only the albums of one artist (the drill-down).
public struct GroupQuery: Sendable, Hashable {
    /// Which view.
    public var kind: GroupKind
    /// Order by sort names (the tag most tracks carry) instead of display names.
    public var useSortTags: Bool
    /// Z to A.
    public var descending: Bool
    /// Albums only: those whose album artist has this ID.
    public var artist: GroupID?
    /// Albums ordered by their album artist's name first, then by their own (Subsonic's
    /// `alphabeticalByArtist`); sections are the album artist's letters. Other views ignore it.
    public var ordersByArtist: Bool

    /// Whether this query orders albums by album artist (`ordersByArtist` on the album view).
    public var byArtist: Bool { ordersByArtist && kind == .album }

    /// A view of `kind` sorted by name ascending, sort tags on.
    public init(kind: GroupKind, useSortTags: Bool = true, descending: Bool = false, artist: GroupID? = nil, byArtist: Bool = false) {
        self.kind = kind
        self.useSortTags = useSortTags
        self.descending = descending
        self.artist = artist
        self.ordersByArtist = byArtist
    }
}

/// A page of an aggregation view.
public struct GroupPage: Sendable, Equatable {
    /// The rows, in the view's order.
    public var items: [GroupItem]
    /// Where the next page starts; nil at the end.
    public var nextCursor: PageCursor?
    /// Rows in the whole view.
    public var total: Int

    /// A page of `items` out of `total`.
    public init(items: [GroupItem], nextCursor: PageCursor?, total: Int) {
        self.items = items
        self.nextCursor = nextCursor
        self.total = total
    }
}
