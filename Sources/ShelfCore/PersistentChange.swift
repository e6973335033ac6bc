import Foundation

/// The identity of any object the change history speaks of.
public enum ObjectKey: Hashable, Sendable, Codable, CustomStringConvertible {
    case track(TrackID)
    case artwork(ArtworkID)
    case playlist(PlaylistID)
    /// A user's saved play queue.
    case playQueue(UserID)

    /// Which kind of object this is.
    public var type: ObjectType {
        switch self {
        case .track: .track
        case .artwork: .artwork
        case .playlist: .playlist
        case .playQueue: .playQueue
        }
    }

    public var description: String {
        switch self {
        case .track(let id): "track \(id)"
        case .artwork(let id): "artwork \(id)"
        case .playlist(let id): "playlist \(id)"
        case .playQueue(let id): "play queue of user \(id)"
        }
    }

    /// Encoded as the bare identifier (a number, or a UUID string for artwork): the object type is
    /// always known from where it appears.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .track(let id): try container.encode(id)
        case .artwork(let id): try container.encode(id)
        case .playlist(let id): try container.encode(id)
        case .playQueue(let id): try container.encode(id.rawValue)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .track(TrackID(number))
        } else {
            self = .artwork(try container.decode(ArtworkID.self))
        }
    }
}

/// An updated object and the property groups the update touched.
public struct UpdatedObject: Hashable, Sendable, Encodable {
    public var id: ObjectKey
    public var groups: PropertyGroups

    /// Pairs an object with the groups that changed.
    public init(id: ObjectKey, groups: PropertyGroups) {
        self.id = id
        self.groups = groups
    }
}

/// What happened to the objects of one type: inserted, updated (with groups) and deleted, each
/// in the order the changes were logged.
public struct ChangeDetails: Sendable, Equatable, Encodable {
    public var inserted: [ObjectKey] = []
    public var updated: [UpdatedObject] = []
    public var deleted: [ObjectKey] = []

    /// Empty details.
    public init() {}

    /// True when nothing of this type changed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Updated objects whose update touched any of `groups` (a cover view asks for `.artwork`).
    public func updated(touching groups: PropertyGroups) -> [ObjectKey] {
        updated.filter { !$0.groups.isDisjoint(with: groups) }.map(\.id)
    }
}

/// One committed write transaction's changes, PhotoKit's `PHPersistentChange` for music.
public struct PersistentChange: Sendable, Equatable, Encodable {
    /// The library's state after this transaction; store it once the change is processed.
    public var token: ChangeToken
    /// When the transaction committed.
    public var date: Date
    public var tracks: ChangeDetails
    public var playlists: ChangeDetails
    public var artwork: ChangeDetails
    /// Users' saved play queues (each user's own; readers outside the engine see only theirs).
    public var playQueues: ChangeDetails

    /// The changes for one object type.
    public func details(for type: ObjectType) -> ChangeDetails {
        switch type {
        case .track: tracks
        case .playlist: playlists
        case .artwork: artwork
        case .playQueue: playQueues
        }
    }

    /// Creates an empty change for `token`.
    public init(token: ChangeToken, date: Date) {
        self.token = token
        self.date = date
        self.tracks = ChangeDetails()
        self.playlists = ChangeDetails()
        self.artwork = ChangeDetails()
        self.playQueues = ChangeDetails()
    }

    /// Mutable access to the details for one type.
    public subscript(type: ObjectType) -> ChangeDetails {
        get { details(for: type) }
        set {
            switch type {
            case .track: tracks = newValue
            case .playlist: playlists = newValue
            case .artwork: artwork = newValue
            case .playQueue: playQueues = newValue
            }
        }
    }

    /// True when nothing changed.
    public var isEmpty: Bool { tracks.isEmpty && playlists.isEmpty && artwork.isEmpty && playQueues.isEmpty }

    /// This change as `viewer` may see it: their own play queue only (another user's queue is
    /// theirs alone); nil keeps every queue (the library's own tools).
    public func seen(by viewer: UserID?) -> PersistentChange {
        guard let viewer else { return self }
        var copy = self
        let mine = ObjectKey.playQueue(viewer)
        copy.playQueues.inserted = playQueues.inserted.filter { $0 == mine }
        copy.playQueues.updated = playQueues.updated.filter { $0.id == mine }
        copy.playQueues.deleted = playQueues.deleted.filter { $0 == mine }
        return copy
    }
}

/// The answer to "what changed since this token?": the changes, oldest first, and the token to
/// store once they are processed. With a limit, `hasMore` says whether to ask again from `token`.
public struct ChangeFeed: Sendable, Equatable, Encodable {
    public var changes: [PersistentChange]
    public var token: ChangeToken
    public var hasMore: Bool

    /// A feed of `changes`, complete up to `token`.
    public init(changes: [PersistentChange], token: ChangeToken, hasMore: Bool) {
        self.changes = changes
        self.token = token
        self.hasMore = hasMore
    }
}
