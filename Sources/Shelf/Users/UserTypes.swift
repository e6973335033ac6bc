import Foundation
import ShelfCore

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
    /// An address for people (Subsonic's `email`); "" when none was given. Shelf sends no mail.
    public var email: String
    /// What the user may do beyond browsing (admins may do everything whatever these say).
    public var roles: UserRoles
    /// The highest bit rate (kbit/s) the user's streams are transcoded to; 0: no limit.
    public var maxBitRate: Int
    /// The IDs of the libraries the user may see; nil: every library (admins see all whatever
    /// this says). An empty list sees nothing, which is what removing a user's only library leaves.
    public var libraries: [Int]?

    /// Builds a value; the store creates users through `addUser`.
    public init(
        id: UserID, name: String, isAdmin: Bool, isOwner: Bool, created: Date, email: String = "",
        roles: UserRoles = .defaults, maxBitRate: Int = 0, libraries: [Int]? = nil
    ) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
        self.isOwner = isOwner
        self.created = created
        self.email = email
        self.roles = roles
        self.maxBitRate = maxBitRate
        self.libraries = libraries
    }

    /// `admin` and `owner` in JSON, the words the command line and the API print.
    enum CodingKeys: String, CodingKey {
        case id, name
        case isAdmin = "admin"
        case isOwner = "owner"
        case created, email, roles, maxBitRate
        case libraries = "libraryIDs"
    }

    /// Whether the user sees every library (an admin, or access to all).
    public var seesAllLibraries: Bool { isAdmin || libraries == nil }

    /// Whether the user may do what `role` allows (admins may do everything).
    public func may(_ role: UserRoles) -> Bool { isAdmin || roles.isSuperset(of: role) }

    public var description: String { "\(name) (\(id))\(isOwner ? " owner" : isAdmin ? " admin" : "")" }
}

/// The permissions a user may be given one by one, named as Subsonic's user roles name them
/// (`streamRole` is `stream`). Stored as the names, comma-separated, so a role added later
/// cannot change what an old number meant.
public struct UserRoles: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: Int
    /// Wraps a bit set.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Play songs (stream, getTranscodeStream).
    public static let stream = UserRoles(rawValue: 1 << 0)
    /// Download the original files.
    public static let download = UserRoles(rawValue: 1 << 1)
    /// Create and edit playlists.
    public static let playlist = UserRoles(rawValue: 1 << 2)
    /// Create public share links.
    public static let share = UserRoles(rawValue: 1 << 3)
    /// Control the server's own audio output (jukeboxControl).
    public static let jukebox = UserRoles(rawValue: 1 << 4)
    /// Subscribe to and manage podcasts.
    public static let podcast = UserRoles(rawValue: 1 << 5)
    /// Change their own password and settings.
    public static let settings = UserRoles(rawValue: 1 << 6)
    /// Subsonic's coverArtRole: kept and shown; Shelf has no separate cover-art permission.
    public static let coverArt = UserRoles(rawValue: 1 << 7)
    /// Subsonic's commentRole: kept and shown; Shelf has no comments.
    public static let comment = UserRoles(rawValue: 1 << 8)
    /// Subsonic's uploadRole: kept and shown; Shelf takes no uploads.
    public static let upload = UserRoles(rawValue: 1 << 9)
    /// Subsonic's scrobblingEnabled: kept and shown; plays are counted either way.
    public static let scrobbling = UserRoles(rawValue: 1 << 10)

    /// Every role by its stored and printed name.
    public static let named: [(UserRoles, String)] = [
        (.stream, "stream"), (.download, "download"), (.playlist, "playlist"), (.share, "share"), (.jukebox, "jukebox"),
        (.podcast, "podcast"), (.settings, "settings"), (.coverArt, "coverArt"), (.comment, "comment"), (.upload, "upload"),
        (.scrobbling, "scrobbling"),
    ]

    /// A new user's: everything but the jukebox (the server's speakers) and uploads (Shelf takes none).
    public static let defaults: UserRoles = [.stream, .download, .playlist, .share, .podcast, .settings, .coverArt, .comment, .scrobbling]

    /// The names, comma-separated, in `named` order.
    public var stored: String { Self.named.filter { contains($0.0) }.map(\.1).joined(separator: ",") }

    /// Parses `stored`; unknown names are dropped (a newer version's role an older one cannot grant).
    public init(stored: String) {
        var roles: UserRoles = []
        for name in stored.split(separator: ",") {
            if let role = Self.named.first(where: { $0.1 == name })?.0 { roles.insert(role) }
        }
        self = roles
    }

    /// The role named `name`, or nil.
    public static func role(named name: String) -> UserRoles? { named.first { $0.1 == name }?.0 }

    public var description: String { stored }
    public init(from decoder: any Decoder) throws {
        self.init(stored: try decoder.singleValueContainer().decode([String].self).joined(separator: ","))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stored.split(separator: ",").map(String.init))
    }
}

/// An API key as it may be shown after creation: its public ID and times, never the secret
/// (which is returned once, by `createAPIKey`) nor its hash.
public struct APIKeyInfo: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The short public ID that names the key for revoking.
    public var id: String
    public var userID: UserID
    public var created: Date
    /// When the key last authenticated (recorded at most once a minute); nil if never, written as
    /// null rather than left out so clients see every key's shape.
    @NullWhenNil public var lastUsed: Date?

    /// Builds a value; the store creates keys through `createAPIKey`.
    public init(id: String, userID: UserID, created: Date, lastUsed: Date?) {
        self.id = id
        self.userID = userID
        self.created = created
        self.lastUsed = lastUsed
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
    /// The place in `tracks` of the song playing (a queue may hold a song twice); nil with `current`.
    public var currentIndex: Int?

    /// Builds a value.
    public init(tracks: [TrackID], current: TrackID?, position: Int, changed: Date, changedBy: String, currentIndex: Int? = nil) {
        self.tracks = tracks
        self.current = current
        self.position = position
        self.changed = changed
        self.changedBy = changedBy
        self.currentIndex = currentIndex ?? current.flatMap { tracks.firstIndex(of: $0) }
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
