import Foundation
import ShelfCore

/// A place a user marked in a track to come back to (an audiobook chapter, a long mix), with a note.
public struct Bookmark: Sendable, Hashable, Codable {
    public var user: UserID
    public var track: TrackID
    /// Milliseconds into the track.
    public var position: Int
    public var comment: String
    public var created: Date
    public var changed: Date

    /// Builds a value; the store saves bookmarks through `saveBookmark`.
    public init(user: UserID, track: TrackID, position: Int, comment: String, created: Date, changed: Date) {
        self.user = user
        self.track = track
        self.position = position
        self.comment = comment
        self.created = created
        self.changed = changed
    }
}

/// The stable ID of an internet radio station, a share, a podcast channel or episode (row IDs, never reused).
public struct SavedID: IntegerIdentifier {
    /// The stored row ID.
    public let rawValue: Int64
    /// Wraps a stored integer.
    public init(rawValue: Int64) { self.rawValue = rawValue }
}

/// An internet radio station the library lists for players; Shelf stores its addresses and never
/// fetches the stream itself (the player does).
public struct RadioStation: Sendable, Hashable, Codable {
    public var id: SavedID
    public var name: String
    /// The stream's address (`http` or `https`).
    public var streamURL: String
    /// The station's own web page, when given.
    public var homePageURL: String?
    public var created: Date

    /// Builds a value; the store adds stations through `addRadioStation`.
    public init(id: SavedID, name: String, streamURL: String, homePageURL: String?, created: Date) {
        self.id = id
        self.name = name
        self.streamURL = streamURL
        self.homePageURL = homePageURL
        self.created = created
    }
}

/// A public link to some tracks: anyone with its token may play those tracks and see their
/// covers, and nothing else of the library, until it expires or is deleted.
public struct Share: Sendable, Hashable, Codable {
    public var id: SavedID
    /// 128 random bits, base64url: the secret part of `/share/TOKEN`.
    public var token: String
    /// The user who made it.
    public var user: UserID
    public var description: String
    public var created: Date
    /// After this the link answers "not found"; nil: never.
    public var expires: Date?
    public var lastVisited: Date?
    public var visitCount: Int
    /// The shared tracks in order (tracks deleted since are gone).
    public var tracks: [TrackID]

    /// Builds a value; the store creates shares through `createShare`.
    public init(
        id: SavedID, token: String, user: UserID, description: String, created: Date, expires: Date?,
        lastVisited: Date?, visitCount: Int, tracks: [TrackID]
    ) {
        self.id = id
        self.token = token
        self.user = user
        self.description = description
        self.created = created
        self.expires = expires
        self.lastVisited = lastVisited
        self.visitCount = visitCount
        self.tracks = tracks
    }

    /// Whether the link still opens at `now`.
    public func isOpen(at now: Date) -> Bool { expires.map { now < $0 } ?? true }
}

/// What changed among albums and album artists since a token: the IDs whose tracks were added,
/// changed or removed, told apart by whether the group still exists.
public struct GroupChanges: Sendable, Hashable {
    /// Exist now and came into being after the token (their earliest track was added after it).
    public var inserted: [GroupID] = []
    /// Exist now and existed before (or were formed by retagging older tracks).
    public var updated: [GroupID] = []
    /// No longer exist.
    public var deleted: [GroupID] = []

    /// An empty value.
    public init() {}
}
