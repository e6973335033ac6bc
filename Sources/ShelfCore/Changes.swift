import Foundation

/// The kinds of object the store records in its change log.
public enum ObjectType: Int, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case track = 1
    case artwork = 2
    case playlist = 3
    /// A user's saved play queue (Subsonic's savePlayQueue), keyed by the user's ID.
    case playQueue = 4

    public var description: String {
        switch self {
        case .track: "track"
        case .artwork: "artwork"
        case .playlist: "playlist"
        case .playQueue: "playQueue"
        }
    }
}

/// What a change did to an object.
public enum ChangeOperation: Int, Sendable, Codable, CustomStringConvertible {
    case insert = 1
    case update = 2
    case delete = 3

    public var description: String {
        switch self {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }
}

/// Which groups of an object's properties an update touched, so a client can ignore updates it
/// does not draw (a cover view skips `playStats`). Stored as a bit mask in `change_log.groups`.
public struct PropertyGroups: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Tags: titles, names, numbers, sort tags, lyrics, comment, compilation, date added, and the
    /// details (lists, roles, MusicBrainz IDs, ReplayGain, release details).
    public static let metadata = PropertyGroups(rawValue: 1 << 0)
    /// The picture (the track's `artworkID`).
    public static let artwork = PropertyGroups(rawValue: 1 << 1)
    /// Play count, skip count, last played and rating: what listening changes.
    public static let playStats = PropertyGroups(rawValue: 1 << 2)
    /// The file and its audio: path, size, modification time, audio properties (bit depth too), audio
    /// hash, and whether the file is missing.
    public static let file = PropertyGroups(rawValue: 1 << 3)
    /// A playlist's items (added, removed or moved).
    public static let items = PropertyGroups(rawValue: 1 << 4)
    /// A user's own data about a track (star, rating, plays): the track row itself may be unchanged.
    public static let userData = PropertyGroups(rawValue: 1 << 5)

    /// Each group with its public name, in a fixed order.
    public static let named: [(PropertyGroups, String)] = [
        (.metadata, "metadata"), (.artwork, "artwork"), (.playStats, "playStats"), (.file, "file"), (.items, "items"),
        (.userData, "userData"),
    ]

    /// The names of the groups set, in a fixed order (the JSON form).
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }

    /// Builds a set from names; nil when a name is unknown.
    public init?(names: [String]) {
        var groups = PropertyGroups()
        for name in names {
            guard let group = Self.named.first(where: { $0.1 == name })?.0 else { return nil }
            groups.insert(group)
        }
        self = groups
    }

    public var description: String { names.joined(separator: ",") }

    public init(from decoder: any Decoder) throws {
        let names = try decoder.singleValueContainer().decode([String].self)
        guard let groups = PropertyGroups(names: names) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown property group in \(names)"))
        }
        self = groups
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(names)
    }
}

extension Track {
    /// The property groups in which `self` differs from `old`; empty when nothing that is stored changed.
    /// `dateModified` is not compared: the store sets it.
    public func changedGroups(from old: Track) -> PropertyGroups {
        var groups = PropertyGroups()
        if title != old.title || artist != old.artist || album != old.album || albumArtist != old.albumArtist
            || composer != old.composer || genre != old.genre || year != old.year || trackNumber != old.trackNumber
            || trackCount != old.trackCount || discNumber != old.discNumber || discCount != old.discCount
            || compilation != old.compilation || comment != old.comment || lyrics != old.lyrics
            || sortTitle != old.sortTitle || sortArtist != old.sortArtist || sortAlbum != old.sortAlbum
            || sortAlbumArtist != old.sortAlbumArtist || sortComposer != old.sortComposer || dateAdded != old.dateAdded
            || details.tagsOnly != old.details.tagsOnly
        {
            groups.insert(.metadata)
        }
        if artworkID != old.artworkID { groups.insert(.artwork) }
        if playCount != old.playCount || skipCount != old.skipCount || lastPlayed != old.lastPlayed
            || rating != old.rating
        {
            groups.insert(.playStats)
        }
        if path != old.path || fileSize != old.fileSize || fileModified != old.fileModified || duration != old.duration
            || bitrate != old.bitrate || sampleRate != old.sampleRate || channels != old.channels || codec != old.codec
            || audioHash != old.audioHash || details.bitDepth != old.details.bitDepth || missingSince != old.missingSince
            || details.cue != old.details.cue
        {
            groups.insert(.file)
        }
        return groups
    }
}
