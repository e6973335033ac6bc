import Foundation
import ShelfCore

/// A user's stable integer ID (never reused: the table is AUTOINCREMENT), the handle the server
/// keeps in its sessions and requests.
public struct UserID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The stored integer.
    public let rawValue: Int64
    /// Wraps a stored integer.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// Wraps a stored integer.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(Int64.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A person who signs in to the library. Carries no credential: passwords and key hashes stay in
/// the store, so printing or encoding a `User` can never leak one.
public struct User: Sendable, Hashable, Codable, CustomStringConvertible {
    public var id: UserID
    /// Unique without regard to case.
    public var name: String
    /// May manage users and the library.
    public var isAdmin: Bool
    /// The one user whose ratings and plays are also the library's own (written through to the track).
    public var isOwner: Bool
    public var created: Date

    /// Builds a value; the store creates users through `addUser`.
    public init(id: UserID, name: String, isAdmin: Bool, isOwner: Bool, created: Date) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
        self.isOwner = isOwner
        self.created = created
    }

    /// `admin` and `owner` in JSON, the words the command line and the API print.
    enum CodingKeys: String, CodingKey {
        case id, name, isAdmin = "admin", isOwner = "owner", created
    }

    public var description: String { "\(name) (\(id))\(isOwner ? " owner" : isAdmin ? " admin" : "")" }
}

/// An API key as it may be shown after creation: its public ID and times, never the secret
/// (which is returned once, by `createAPIKey`) nor its hash.
public struct APIKeyInfo: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The short public ID that names the key for revoking.
    public var id: String
    public var userID: UserID
    public var created: Date
    /// When the key last authenticated (recorded at most once a minute); nil if never.
    public var lastUsed: Date?

    /// Builds a value; the store creates keys through `createAPIKey`.
    public init(id: String, userID: UserID, created: Date, lastUsed: Date?) {
        self.id = id
        self.userID = userID
        self.created = created
        self.lastUsed = lastUsed
    }

    enum CodingKeys: String, CodingKey { case id, userID, created, lastUsed }

    /// `lastUsed` is written as null rather than left out, so clients see every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(created, forKey: .created)
        try container.encode(lastUsed, forKey: .lastUsed)
    }

    public var description: String { "key \(id) of user \(userID)" }
}

/// A user's saved play queue: the songs in order, the one playing and how far into it, and when
/// and from which client it was saved.
public struct PlayQueue: Sendable, Hashable {
    public var tracks: [TrackID]
    /// The song playing; nil when none was named (or it left the library).
    public var current: TrackID?
    /// Milliseconds into `current`.
    public var position: Int
    public var changed: Date
    /// The client that saved it (Subsonic's `c`).
    public var changedBy: String

    /// Builds a value.
    public init(tracks: [TrackID], current: TrackID?, position: Int, changed: Date, changedBy: String) {
        self.tracks = tracks
        self.current = current
        self.position = position
        self.changed = changed
        self.changedBy = changedBy
    }
}

/// One user's own data about one track.
public struct UserTrackData: Sendable, Hashable, Codable {
    /// When the user starred the track; nil if not starred.
    public var starred: Date?
    /// 0…100, nil when the user has not rated it.
    public var rating: Int?
    public var playCount: Int
    public var lastPlayed: Date?

    /// Builds a value; the default is a track the user never touched.
    public init(starred: Date? = nil, rating: Int? = nil, playCount: Int = 0, lastPlayed: Date? = nil) {
        self.starred = starred
        self.rating = rating
        self.playCount = playCount
        self.lastPlayed = lastPlayed
    }
}

/// Who a playlist belongs to. Playlists without an owner belong to the library and everyone
/// sees them; an owned one is seen by others only when public.
public struct PlaylistOwnership: Sendable, Hashable, Codable {
    /// The owner; nil for a library playlist.
    public var user: UserID?
    public var isPublic: Bool

    /// Builds a value.
    public init(user: UserID?, isPublic: Bool) {
        self.user = user
        self.isPublic = isPublic
    }
}

/// The orders of one user's own track lists (Subsonic's frequent, recent and highest).
public enum UserTrackOrder: String, Sendable, CaseIterable {
    /// Most played first.
    case mostPlayed
    /// Most recently played first.
    case recentlyPlayed
    /// Best rated first.
    case bestRated
}
