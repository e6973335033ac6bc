import Foundation

/// What a list row shows: never lyrics, never artwork bytes.
public struct TrackListItem: Sendable, Codable, Equatable, Identifiable {
    public var id: TrackID
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var genre: String?
    public var year: Int?
    public var trackNumber: Int?
    public var discNumber: Int?
    public var duration: Double?
    public var rating: Int
    public var playCount: Int
    public var hasArtwork: Bool
    public var compilation: Bool
    /// The section the row files under in the list's order (A–Z, a kana row, or `#`).
    public var section: String
    /// The MusicBrainz release ID of the track's album, in lower case: part of which album the
    /// track is on (two releases of one name are two albums). Nil without one.
    public var releaseID: String?
    /// The MusicBrainz ID of the artist the album files under (its album artist, else its
    /// artist), in lower case: part of which album the track is on, as the release is. Nil
    /// without one and for compilations' tracks.
    public var ownerArtistID: String?

    /// The list row of a track in a list whose section for it is `section`.
    public init(_ track: Track, section: String) {
        id = track.id
        title = track.title
        artist = track.artist
        album = track.album
        albumArtist = track.albumArtist
        genre = track.genre
        year = track.year
        trackNumber = track.trackNumber
        discNumber = track.discNumber
        duration = track.duration
        rating = track.rating
        playCount = track.playCount
        hasArtwork = track.hasArtwork
        compilation = track.compilation
        self.section = section
        releaseID = SortKey.release(track.details.musicBrainz.releaseID)
        if !track.compilation {
            ownerArtistID = SortKey.release(SortKey.isBlank(track.albumArtist) ? track.details.displayArtistID : track.details.displayAlbumArtistID)
        }
    }

    /// Builds a row from its parts.
    public init(
        id: TrackID, title: String?, artist: String?, album: String?, albumArtist: String?, genre: String?,
        year: Int?, trackNumber: Int?, discNumber: Int?, duration: Double?, rating: Int, playCount: Int,
        hasArtwork: Bool, compilation: Bool, section: String, releaseID: String? = nil, ownerArtistID: String? = nil
    ) {
        self.id = id
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.genre = genre
        self.year = year
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.duration = duration
        self.rating = rating
        self.playCount = playCount
        self.hasArtwork = hasArtwork
        self.compilation = compilation
        self.section = section
        self.releaseID = releaseID
        self.ownerArtistID = ownerArtistID
    }
}

/// A position in a sorted list: the sort key of a row and its ID. `inclusive` cursors (from
/// `anchor`) start at that row; the others start after it. Its string form is opaque and stable.
public struct PageCursor: Sendable, Hashable, CustomStringConvertible {
    public var key: [SortComponent]
    public var id: TrackID
    public var inclusive: Bool

    /// A cursor at (or after) the row with this key and ID.
    public init(key: [SortComponent], id: TrackID, inclusive: Bool = false) {
        self.key = key
        self.id = id
        self.inclusive = inclusive
    }

    /// `c1.<components>.<id>[.i]`, each component `b<hex>` (bytes) or `n<number>`.
    public var description: String {
        let parts = key.map { component -> String in
            switch component {
            case .bytes(let bytes): "b" + bytes.map { String(format: "%02x", $0) }.joined()
            case .number(let value): "n" + String(value.bitPattern, radix: 16)
            }
        }
        return (["c1"] + parts + [String(id.rawValue)] + (inclusive ? ["i"] : [])).joined(separator: ".")
    }

    /// Parses the string form; nil when the text is not a cursor.
    public init?(_ text: String) {
        var parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, parts.removeFirst() == "c1" else { return nil }
        let inclusive = parts.last == "i"
        if inclusive { parts.removeLast() }
        guard let last = parts.popLast(), let id = Int64(last) else { return nil }
        var key: [SortComponent] = []
        for part in parts {
            let body = part.dropFirst()
            if part.hasPrefix("b") {
                guard body.count % 2 == 0 else { return nil }
                var bytes: [UInt8] = []
                var index = body.startIndex
                while index < body.endIndex {
                    let next = body.index(index, offsetBy: 2)
                    guard let byte = UInt8(body[index..<next], radix: 16) else { return nil }
                    bytes.append(byte)
                    index = next
                }
                key.append(.bytes(bytes))
            } else if part.hasPrefix("n"), let bits = UInt64(body, radix: 16) {
                key.append(.number(Double(bitPattern: bits)))
            } else {
                return nil
            }
        }
        self.init(key: key, id: TrackID(id), inclusive: inclusive)
    }
}

/// One page of a list: its rows, the cursor for the next page (nil at the end), the list's total.
public struct ListPage: Sendable, Equatable {
    public var items: [TrackListItem]
    public var nextCursor: PageCursor?
    public var total: Int

    /// A page of `items`.
    public init(items: [TrackListItem], nextCursor: PageCursor?, total: Int) {
        self.items = items
        self.nextCursor = nextCursor
        self.total = total
    }
}

/// A section of a list: its name, the index of its first row, and how many rows it has.
public struct SectionInfo: Sendable, Codable, Equatable {
    public var name: String
    public var firstIndex: Int
    public var count: Int

    /// A section named `name` of `count` rows from `firstIndex`.
    public init(name: String, firstIndex: Int, count: Int) {
        self.name = name
        self.firstIndex = firstIndex
        self.count = count
    }
}

/// Where a section starts: the index of its first row and a cursor that pages from it.
public struct SectionAnchor: Sendable, Equatable {
    public var index: Int
    public var cursor: PageCursor

    /// The anchor at `index`.
    public init(index: Int, cursor: PageCursor) {
        self.index = index
        self.cursor = cursor
    }
}
